"""Headless runs in real kernels: ``jupyter nbconvert --execute`` exits non-zero on a failed
turn (one line, no traceback of ours) and zero on a completed one; nbclient's kernel waits
for no front-end (no settle, approvals denied at once)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import jupyter_brain

from ..kernel_notebooks import drop_keys, execute, load_extension

pytestmark = pytest.mark.kernel

PACKAGE_DIR = str(Path(jupyter_brain.__file__).resolve().parent)


def _notebook(tmp_path: Path, script: str, agent_line: str = "%%agent --provider bot") -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            load_extension(tmp_path / 'jb') +
            "from jupyter_brain import ScriptedProvider\n"
            f"bot = ScriptedProvider({script})"),
        nbformat.v4.new_code_cell(f"{agent_line}\nWhich month dropped most?"),
        nbformat.v4.new_code_cell("print('the next cell ran')"),
    ]
    path = tmp_path / "run.ipynb"
    nbformat.write(nb, path)
    return path


def _nbconvert(path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL")}
    return subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", path.name,
         "--output", "done.ipynb", "--ExecutePreprocessor.timeout=120"],
        cwd=path.parent, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_nbconvert_exits_non_zero_when_a_turn_fails(tmp_path) -> None:
    run = _nbconvert(_notebook(tmp_path, "[{'error': {'message': 'the server is down', 'kind': 'bad_request'}}]"))
    assert run.returncode != 0, run.stderr
    line = ("AgentTurnFailed\x1b[0m: %%agent: the turn stopped (error): scripted bad_request error: the server is "
            "down [AgentMagics.fail_on fails the cell on it]")
    assert line in run.stderr, run.stderr
    assert f'File "{PACKAGE_DIR}' not in run.stderr  # no traceback through our code
    assert "the next cell ran" not in run.stderr + run.stdout  # the run stopped at the failed cell


def test_nbconvert_exits_zero_when_the_turn_completes(tmp_path) -> None:
    run = _nbconvert(_notebook(tmp_path, "['**March** dropped most.']"))
    assert run.returncode == 0, run.stderr
    done = nbformat.read(tmp_path / "done.ipynb", as_version=4)
    markdown = next(o for o in done.cells[1].outputs if o.output_type == "display_data").data["text/markdown"]
    assert "**March** dropped most." in markdown
    assert done.cells[2].outputs[0].text == "the next cell ran\n"


def test_nbclient_runs_wait_for_no_front_end(tmp_path, monkeypatch) -> None:
    drop_keys(monkeypatch)
    script = "[{'tool_calls': [{'name': 'run_python', 'arguments': {'code': 'made = 1'}}]}, 'Nobody could approve.']"
    nb = nbformat.read(_notebook(tmp_path, script, "%%agent --provider bot --permission ask"), as_version=4)
    nb.cells[2].source = (
        "from jupyter_brain.agent.events import ApprovalDecision\n"
        "m = get_ipython().magics_manager.registry['AgentMagics']\n"
        "decisions = [e for e in m.manager.event_log.events(turn_id=_agent.turn_id) if isinstance(e, ApprovalDecision)]\n"
        "print(m.lab.comm is not None, m.lab.settle_skipped, _agent.status, _agent.tool_calls[0].status,\n"
        "      [(d.by, d.channel) for d in decisions], 'made' in globals())")
    execute(nb, tmp_path)
    # The comm %load_ext opened is there (nobody answered it), and the first turn did not wait for it;
    # the approval nobody could give was denied on the headless path, and the code did not run.
    assert nb.cells[2].outputs[0].text.split() == [
        "True", "1", "completed", "denied", "[('no_frontend',", "'headless')]", "False"]
