"""A cell's turn in real kernels (issue #24, section 1): nbclient runs cells as nbconvert
does (no cell id: the cell is known by its text), jupyter_client sends JupyterLab's
``cellId``. Each provider records its calls; the one a test must not reach fails it."""

from __future__ import annotations

import json

import nbformat
import pytest
from nbclient import NotebookClient

from ..kernel_notebooks import drop_keys

pytestmark = pytest.mark.kernel


SETUP = (
    "%load_ext jupyter_brain\n"
    "from jupyter_brain import ScriptedProvider\n"
    "class Never(ScriptedProvider):\n"
    "    def generate_stream(self, *a, **k):\n"
    "        raise AssertionError('no model call was expected')\n"
    "    generate = generate_stream\n"
    "never = Never()\n"
    "%config AgentMagics.provider = 'never'\n"
    # A re-run here calls the model: what it sends is what these tests check (a re-run
    # that matches its recording replays instead: tests/notebook/test_replay_kernel.py).
    "%config AgentMagics.replay = 'off'\n"
)
DIALOGUE = ("import json\n"
            "print(json.dumps([[m['content'] for m in c['messages'] if m['role'] in ('user', 'assistant')]"
            " for c in bot.calls]))")


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch):
    drop_keys(monkeypatch)


def _notebook(*sources: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nb


def _client(nb, tmp_path) -> NotebookClient:
    return NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def _markdown(cell) -> str:
    return "".join(o.data.get("text/markdown", "") for o in cell.outputs if o.output_type == "display_data")


def _run_rerunning(tmp_path, line: str) -> tuple[list, nbformat.NotebookNode]:
    """Cell 1 is run three times (as a user re-runs it), then the next cell asks on."""
    nb = _notebook(SETUP + "bot = ScriptedProvider(['a1', 'a2', 'a3', 'next'])",
                   f"%%agent {line}\nWhich month dropped most?",
                   "%%agent --provider bot\nAnd why?",
                   DIALOGUE)
    client = _client(nb, tmp_path)
    with client.setup_kernel():
        client.execute_cell(nb.cells[0], 0)
        for _ in range(3):
            client.execute_cell(nb.cells[1], 1)
        for i in (2, 3):
            client.execute_cell(nb.cells[i], i)
    return json.loads(_text(nb.cells[3])), nb


def test_a_cell_rerun_three_times_leaves_one_turn_in_what_is_sent(tmp_path):
    calls, nb = _run_rerunning(tmp_path, "--provider bot")
    assert calls[:3] == [["Which month dropped most?"]] * 3
    assert calls[3] == ["Which month dropped most?", "a3", "And why?"]
    assert "### Agent — Turn 3" in _markdown(nb.cells[1])  # the third run of the cell is the session's third turn
    assert "### Agent — Turn 4" in _markdown(nb.cells[2])


def test_append_keeps_the_earlier_turns(tmp_path):
    calls, _ = _run_rerunning(tmp_path, "--provider bot --append")
    assert calls[3] == ["Which month dropped most?", "a1", "Which month dropped most?", "a2",
                        "Which month dropped most?", "a3", "And why?"]


def test_a_fresh_kernel_does_not_continue_and_resuming_is_announced(tmp_path):
    first = _notebook(SETUP + "bot = ScriptedProvider(['a1', 'b1'])",
                      "%%agent --provider bot\nFirst question", "%%agent --provider bot\nSecond question")
    _client(first, tmp_path).execute()
    again = _notebook(SETUP + "bot = ScriptedProvider(['a2'])",
                      "%%agent --provider bot\nFirst question",
                      DIALOGUE,
                      "%agent use default",
                      "%agent cost",
                      "%agent inspect 2",
                      "print(len(never.calls))")
    _client(again, tmp_path).execute()
    assert "new session default-2" in _text(again.cells[1])
    assert json.loads(_text(again.cells[2])) == [["First question"]]  # not the first run's history
    assert _text(again.cells[3]).strip() == "continuing session default (2 turns from the event log)"
    cost = _text(again.cells[4])  # the earlier kernel's turns, from the log
    assert "turn 1:" in cost and "turn 2:" in cost and "total: $0.0000" in cost
    inspect = _text(again.cells[5])
    assert "Request of turn" in inspect and "First question" in inspect and "Second question" in inspect
    assert _text(again.cells[6]).strip() == "0"


def test_jupyterlab_cell_id_makes_an_edited_cell_replace_its_turn(tmp_path):
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        def run(code: str, cell_id: str | None = None) -> str:
            msg = kc.session.msg("execute_request", {
                "code": code, "silent": False, "store_history": True, "user_expressions": {},
                "allow_stdin": False, "stop_on_error": True}, metadata={"cellId": cell_id} if cell_id else {})
            kc.shell_channel.send(msg)
            out: list[str] = []
            while True:
                reply = kc.get_iopub_msg(timeout=60)
                if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
                    continue
                if reply["msg_type"] == "stream":
                    out.append(reply["content"]["text"])
                elif reply["msg_type"] == "error":
                    raise AssertionError("\n".join(reply["content"]["traceback"]))
                elif reply["msg_type"] == "status" and reply["content"]["execution_state"] == "idle":
                    return "".join(out)

        run(SETUP + "bot = ScriptedProvider(['March', 'April', 'ok'])")
        run("%%agent --provider bot\nWhich month?", "cell-1")
        run("%%agent --provider bot\nWhich month in 2024?", "cell-1")  # the cell, edited and run again
        run("%%agent --provider bot\nWhy?", "cell-2")
        assert json.loads(run(DIALOGUE)) == [["Which month?"], ["Which month in 2024?"],
                                             ["Which month in 2024?", "April", "Why?"]]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
