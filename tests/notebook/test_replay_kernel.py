"""Recorded turns replay in real kernels, executed as nbconvert and papermill do (nbclient).

A notebook with two ``%%agent`` cells (a tool call, then an answer; then a follow-up) is
run once with a scripted model; the saved notebook then runs again in a fresh kernel with
a provider that fails the test if it is called (``Refusing``): it records every call, and
the last cell prints how many there were.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from ..kernel_notebooks import drop_keys

pytestmark = pytest.mark.kernel


SCRIPT = """[
    {"text": "", "tool_calls": [{"name": "run_python", "arguments": {"code": "drop = min(sales, key=sales.get)\\nprint(drop)"}}]},
    "The month with the lowest sales is the one the code printed.",
    "It is stored in `drop`.",
]"""

REFUSING = """
class Refusing:
    '''A provider that must not be called: it keeps each call and fails it.'''
    name, model = "refusing", "none"
    def __init__(self, *responses):
        self.calls = []
    def generate(self, messages, tools, **kw):
        self.calls.append(messages)
        from jupyter_brain.providers.base import ProviderError
        raise ProviderError("the model was called", kind="bad_request")
    generate_stream = generate
"""

FIRST = "%%agent --provider bot --permission auto --out a1\nWhich month of `sales` is lowest? Keep it in `drop`."
SECOND = "%%agent --provider bot --out a2\nWhere is it stored?"
REPORT = "print(json.dumps({'texts': [a1.text, a2.text], 'replay': [a1.replay, a2.replay], 'drop': drop, 'calls': len(bot.calls)}))"


def setup_cell(data_dir: Path, provider: str, sales: str = "{'jan': 10, 'feb': 7, 'mar': 9}", extra: str = "") -> str:
    return (f"%load_ext jupyter_brain\n%config AgentMagics.data_dir = {str(data_dir)!r}\n{extra}\n"
            f"import json\nfrom jupyter_brain import ScriptedProvider\n{REFUSING}\n"
            f"sales = {sales}\nbot = {provider}")


def notebook(setup: str, first: str = FIRST, second: str = SECOND) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(setup), nbformat.v4.new_code_cell(first),
                nbformat.v4.new_code_cell(second), nbformat.v4.new_code_cell(REPORT)]
    return nb


def execute(nb: nbformat.NotebookNode, folder: Path) -> dict:
    NotebookClient(nb, timeout=180, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    assert out.strip(), nb.cells[-1].outputs
    return json.loads(out.strip().splitlines()[-1])


def rerun(recorded: Path, setup: str, *, first: str = FIRST, second: str = SECOND) -> tuple[dict, nbformat.NotebookNode]:
    """The saved notebook with its setup cell (and maybe a prompt) replaced, run again."""
    nb = nbformat.read(recorded, as_version=4)
    nb.cells[0].source = setup
    nb.cells[1].source, nb.cells[2].source = first, second
    return execute(nb, recorded.parent), nb


@pytest.fixture()
def recorded(tmp_path, monkeypatch) -> tuple[Path, dict]:
    """The notebook run once with the scripted model, saved in its folder."""
    drop_keys(monkeypatch)
    folder = tmp_path / "author"
    folder.mkdir()
    nb = notebook(setup_cell(tmp_path / "data-first", f"ScriptedProvider({SCRIPT})"))
    path = folder / "analysis.ipynb"
    nbformat.write(nb, path)
    first = execute(nb, folder)
    nbformat.write(nb, path)
    return path, first


def agent_markdown(nb: nbformat.NotebookNode, index: int) -> str:
    return "".join(o.data.get("text/markdown", "") for o in nb.cells[index].outputs if o.output_type == "display_data")


def test_run_all_in_a_fresh_kernel_replays_with_no_model_call(recorded, tmp_path):
    path, first = recorded
    assert first["replay"] == ["live", "live"] and first["calls"] == 3 and first["drop"] == "feb"
    saved = nbformat.read(path, as_version=4)
    meta = [o.metadata["jupyter_brain"]["recording"] for o in saved.cells[1].outputs if "jupyter_brain" in o.get("metadata", {})]
    assert len(meta) == 1 and len(meta[0]["calls"]) == 2  # tool step + answer
    assert len(json.dumps(meta[0])) < 20_000  # a recording is small: responses and fingerprints only

    again, nb = rerun(path, setup_cell(tmp_path / "data-fresh", "Refusing()"))
    assert again["calls"] == 0
    assert again["texts"] == first["texts"]
    assert again["replay"] == ["replayed", "replayed"]
    assert again["drop"] == "feb"  # the agent's tool ran again: its variable exists
    assert "replayed" in agent_markdown(nb, 1)  # the view's header says so


def test_an_edited_prompt_goes_live(recorded, tmp_path):
    path, first = recorded
    edited = "%%agent --provider bot --out a2\nWhere is that month stored?"
    again, _ = rerun(path, setup_cell(tmp_path / "data-fresh", "ScriptedProvider(['In `drop`.'])"), second=edited)
    assert again["calls"] == 1  # only the edited cell called the model
    assert again["replay"] == ["replayed", "live"]
    assert again["texts"] == [first["texts"][0], "In `drop`."]


def test_a_changed_tool_result_goes_live_from_that_step(recorded, tmp_path):
    path, first = recorded
    live = "ScriptedProvider(['March is lowest.', 'In `drop`.'])"
    again, nb = rerun(path, setup_cell(tmp_path / "data-fresh", live, sales="{'jan': 10, 'feb': 12, 'mar': 9}"))
    assert again["drop"] == "mar"  # the recorded tool call ran on the new data
    assert again["calls"] == 2  # step 2 of the first cell (after the tool), then the second cell
    assert again["replay"] == ["partly replayed", "live"]
    assert again["texts"] == ["March is lowest.", "In `drop`."]
    assert "the result of tool call 1 (run_python) changed" in agent_markdown(nb, 1)


def test_strict_replay_stops_and_names_what_changed(recorded, tmp_path):
    path, _ = recorded
    setup = setup_cell(tmp_path / "data-fresh", "Refusing()", sales="{'jan': 10, 'feb': 12, 'mar': 9}",
                       extra='%config AgentMagics.replay = "strict"')
    again, nb = rerun(path, setup)
    assert again["calls"] == 0
    assert again["replay"] == ["stopped", "stopped"]
    shown = agent_markdown(nb, 1)
    assert "--replay strict: the recording of this cell no longer matches at step 2: the result of tool call 1 (run_python) changed" in shown


def test_the_strict_flag_on_a_cell_still_finds_its_recording(recorded, tmp_path):
    path, first = recorded
    strict = FIRST.replace("--out a1", "--out a1 --replay strict")
    again, _ = rerun(path, setup_cell(tmp_path / "data-fresh", "Refusing()"), first=strict)
    assert again["calls"] == 0 and again["replay"] == ["replayed", "replayed"]
    assert again["texts"] == first["texts"]


def test_rerun_calls_the_model(recorded, tmp_path):
    path, first = recorded
    rerun_first = FIRST.replace("--out a1", "--out a1 --rerun")
    again, _ = rerun(path, setup_cell(tmp_path / "data-fresh", f"ScriptedProvider({SCRIPT})"), first=rerun_first)
    assert again["calls"] == 2  # the first cell live; the second cell's requests match again: replayed
    assert again["replay"] == ["live", "replayed"]
    assert again["texts"] == first["texts"]


def test_replay_off_calls_the_model(recorded, tmp_path):
    path, first = recorded
    setup = setup_cell(tmp_path / "data-fresh", f"ScriptedProvider({SCRIPT})", extra='%config AgentMagics.replay = "off"')
    again, _ = rerun(path, setup)
    assert again["calls"] == 3 and again["replay"] == ["live", "live"]


def test_the_event_log_replays_a_notebook_saved_without_outputs(recorded, tmp_path):
    path, first = recorded
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.outputs = []
    nbformat.write(nb, path)  # no recording in the file: the event log of the first run has them
    # The same data folder, in a session of its own (the default one holds the first run's turns).
    again, _ = rerun(path, setup_cell(tmp_path / "data-first", "Refusing()", extra="%agent new second-run"))
    assert again["calls"] == 0 and again["texts"] == first["texts"]


SHARED_FIRST = "%%agent --provider anthropic --permission auto --out a1\nWhich month of `sales` is lowest? Keep it in `drop`."
SHARED_SECOND = "%%agent --provider anthropic --out a2\nWhere is it stored?"


def dated(day: str) -> str:
    """A cell that fixes the runtime layer's date (where the runtime integration reads it)."""
    return ("import datetime as dt, functools\n"
            "from jupyter_brain.agent.integrations.runtime import hook as runtime_hook\n"
            "from jupyter_brain.agent.runtime_context import runtime_text\n"
            f"runtime_hook.runtime_text = functools.partial(runtime_text, today=lambda: dt.date.fromisoformat({day!r}))")


def test_a_shared_notebook_reruns_elsewhere_another_day_with_no_key(tmp_path, monkeypatch):
    drop_keys(monkeypatch)
    author = tmp_path / "author"
    author.mkdir()
    # The author has a key: "anthropic" is a scripted Claude here (the registry patched in the kernel).
    has_key = ("import jupyter_brain.providers.registry as registry\n"
               f"from jupyter_brain import ScriptedProvider\nclaude = ScriptedProvider({SCRIPT}, model='claude-sonnet-4-5')\n"
               "claude.name = 'anthropic'\nregistry.get_provider = lambda name='auto', model=None, **kw: claude")
    setup = "%load_ext jupyter_brain\nimport json\nsales = {'jan': 10, 'feb': 7, 'mar': 9}\nbot = claude"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(has_key + "\n" + dated("2026-01-02")), nbformat.v4.new_code_cell(setup),
                nbformat.v4.new_code_cell(SHARED_FIRST), nbformat.v4.new_code_cell(SHARED_SECOND),
                nbformat.v4.new_code_cell(REPORT)]
    nbformat.write(nb, author / "analysis.ipynb")
    first = execute(nb, author)
    assert first["calls"] == 3 and first["replay"] == ["live", "live"]
    nbformat.write(nb, author / "analysis.ipynb")

    elsewhere = tmp_path / "another machine" / "projects"
    elsewhere.mkdir(parents=True)
    shutil.copy(author / "analysis.ipynb", elsewhere / "shared.ipynb")
    shared = nbformat.read(elsewhere / "shared.ipynb", as_version=4)
    # No key, no patched registry, another day; "bot" only counts what would have been asked.
    shared.cells[0].source = dated("2031-07-04") + "\n" + REFUSING + "\nclaude = Refusing()"
    again = execute(shared, elsewhere)
    assert not (author / ".jupyter_brain").samefile(elsewhere) and (elsewhere / ".jupyter_brain").is_dir()
    assert again["calls"] == 0
    assert again["texts"] == first["texts"] and again["drop"] == "feb"
    assert again["replay"] == ["replayed", "replayed"]


def test_strict_with_an_edited_prompt_stops_that_cell(recorded, tmp_path):
    path, first = recorded
    edited = "%%agent --provider bot --out a2\nWhere is that month stored?"
    setup = setup_cell(tmp_path / "data-fresh", "Refusing()", extra='%config AgentMagics.replay = "strict"')
    again, nb = rerun(path, setup, second=edited)
    assert again["calls"] == 0
    assert again["replay"] == ["replayed", "stopped"] and again["texts"][0] == first["texts"][0]
    assert "--replay strict: this cell has no recording" in agent_markdown(nb, 2)
    assert "its prompt or flags changed since it was saved" in agent_markdown(nb, 2)


def test_a_tool_call_allowed_when_recorded_runs_again_without_asking(tmp_path, monkeypatch):
    drop_keys(monkeypatch)
    first_cell = FIRST.replace(" --permission auto", "")  # asks (the default): nobody can answer here
    nb = notebook(setup_cell(tmp_path / "data-first", f"ScriptedProvider({SCRIPT})",
                             extra='%config AgentMagics.permission = "auto"'), first=first_cell)
    path = tmp_path / "analysis.ipynb"
    first = execute(nb, tmp_path)
    assert first["drop"] == "feb"
    nbformat.write(nb, path)
    again, _ = rerun(path, setup_cell(tmp_path / "data-fresh", "Refusing()"), first=first_cell)
    assert again["calls"] == 0 and again["replay"] == ["replayed", "replayed"]
    assert again["drop"] == "feb" and again["texts"] == first["texts"]


def test_nbconvert_execute_replays_the_saved_notebook(recorded, tmp_path):
    import subprocess
    import sys

    path, first = recorded
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = setup_cell(tmp_path / "data-fresh", "Refusing()")
    nbformat.write(nb, path)  # the file nbconvert reads carries the recordings in its outputs
    out = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                          "--output", "executed.ipynb", str(path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    executed = nbformat.read(path.parent / "executed.ipynb", as_version=4)
    text = "".join(o.get("text", "") for o in executed.cells[-1].outputs if o.output_type == "stream")
    again = json.loads(text.strip().splitlines()[-1])
    assert again["calls"] == 0 and again["texts"] == first["texts"] and again["replay"] == ["replayed", "replayed"]
