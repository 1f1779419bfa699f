"""``%%agent --engine claude-code`` cells in a real kernel, run headless as nbclient runs
them: the kernel reached over MCP, ``_agent``, the recording saved in the output's metadata
and replayed in another folder with no agent and no model; an agent that speaks something
other than JSON-RPC fails its cell with one line and the kernel goes on (issue #36)."""

from __future__ import annotations

import json
import sys

import nbformat
import pytest

from ..kernel_notebooks import drop_keys, execute, load_extension, notebook
from .conftest import agent_bin, agent_env
from .scripted_claude import text, tool_use

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

PROMPT = "%%agent --engine claude-code --permission auto\nSet x to 6 * 7 in the kernel."


def _outputs_text(cell) -> str:
    return "".join(o.get("text", "") or json.dumps(o.get("data", {})) for o in cell.outputs)


def test_engine_cell_runs_records_and_replays_without_the_agent(claude, agent_home, tmp_path, monkeypatch):
    agent_bin()
    drop_keys(monkeypatch)
    for key, value in agent_env(claude.url, agent_home).items():
        monkeypatch.setenv(key, value)
    claude.push([tool_use("mcp__jupyter-kernel__execute_code", {"code": "x = 6 * 7"}, "toolu_k1")],
                [text("x is 42 now.")])
    first = tmp_path / "first"
    first.mkdir()
    nb = execute(notebook(load_extension(first / ".jb"), PROMPT, "print(x, _agent.status, _agent.text)"), first,
                 timeout=300)
    assert "42 completed x is 42 now." in _outputs_text(nb.cells[2])
    saved = [o for o in nb.cells[1].outputs if (o.get("metadata") or {}).get("jupyter_brain")]
    assert saved and "engine_recording" in saved[-1]["metadata"]["jupyter_brain"]

    # another machine: another folder, no agent on PATH, no model server, no key
    claude.stop()
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    second = tmp_path / "second"
    second.mkdir()
    nbformat.write(nb, second / "saved.ipynb")
    again = nbformat.read(second / "saved.ipynb", as_version=4)
    again.cells[0].source = load_extension(second / ".jb")
    execute(again, second, timeout=120)
    assert "42 completed x is 42 now." in _outputs_text(again.cells[2])  # the kernel code ran again


def test_an_agent_that_speaks_no_json_rpc_fails_its_cell_and_the_kernel_goes_on(tmp_path, monkeypatch):
    drop_keys(monkeypatch)
    broken = f"{sys.executable} -c \"print('this is not JSON-RPC')\""
    nb = notebook(load_extension(tmp_path / ".jb") + f"%config AgentMagics.engines = {{'broken': {broken!r}}}",
                  "%%agent --engine broken\nhello", "%%agent --engine nosuch\nhello", "print('still here')",
                  "%%agent --engine claude-code --replay strict\nnever recorded")
    execute(nb, tmp_path, allow_errors=True, timeout=120)
    errors = [o for o in nb.cells[1].outputs if o.output_type == "error"]
    assert errors and "not JSON-RPC" in errors[0].evalue and "Traceback" not in errors[0].evalue
    assert "UsageError: %%agent: unknown engine 'nosuch'; choose from broken, builtin, claude-code" in \
        _outputs_text(nb.cells[2])  # IPython shows a UsageError as one line
    assert "still here" in _outputs_text(nb.cells[3])
    assert "--replay strict: no recording of this cell matches" in _outputs_text(nb.cells[4])
