"""The kernel's side of the JupyterLab extension (``lab_channel.py``) with a fake comm.

The fake stands for ipykernel's ``comm`` objects: ``send``, ``on_msg``, ``on_close``,
``close``; messages from the front-end arrive as ``{"content": {"data": ...}}``.
"""

from __future__ import annotations

import json

import pytest

from jupyter_brain.notebook.lab_channel import FRONTEND_TARGET, KERNEL_TARGET, LabChannel, current_cell_id
from jupyter_brain.notebook.lab_payloads import call_outputs
from jupyter_brain.providers.scripted import ScriptedProvider


class FakeComm:
    def __init__(self, target_name: str = "", data: dict | None = None) -> None:
        self.target_name, self.open_data = target_name, data
        self.sent: list[dict] = []
        self.closed = False
        self._on_msg = self._on_close = None

    def send(self, data):
        json.dumps(data)  # what a real comm needs: plain JSON
        self.sent.append(data)

    def on_msg(self, fn):
        self._on_msg = fn

    def on_close(self, fn):
        self._on_close = fn

    def close(self):
        self.closed = True

    # the front-end's side
    def receive(self, data):
        self._on_msg({"content": {"data": data}})

    def close_from_frontend(self):
        self._on_close({"content": {"data": {}}})

    def of_type(self, kind):
        return [m for m in self.sent if m.get("type") == kind]


class FakeManager:
    def __init__(self):
        self.targets = {}

    def register_target(self, name, fn):
        self.targets[name] = fn


def lab_for(shell, *, ready=True, cell_id="cell-agent-1"):
    magics = shell.magics_manager.registry["AgentMagics"]
    comms: list[FakeComm] = []
    manager = FakeManager()

    def create_comm(target_name, data):
        comms.append(FakeComm(target_name, data))
        return comms[-1]

    channel = LabChannel(magics, create_comm=create_comm, comm_manager=manager)
    magics.lab = channel
    channel.start()
    if ready:
        comms[0].receive({"type": "ready", "version": "0.1.0"})
    shell.parent_header = {"metadata": {"cellId": cell_id}} if cell_id else {}
    return channel, comms, manager


def run_python(code):
    return {"text": "", "tool_calls": [{"name": "run_python", "arguments": {"code": code}}]}


def test_start_opens_a_comm_to_the_extension_and_registers_the_kernel_target(shell):
    channel, comms, manager = lab_for(shell, ready=False)
    assert comms[0].target_name == FRONTEND_TARGET and comms[0].open_data["type"] == "hello"
    assert KERNEL_TARGET in manager.targets
    assert not channel.present  # no "ready" yet: a front-end without the extension
    assert channel.send({"type": "status"}) is False and comms[0].sent == []
    comms[0].receive({"type": "ready", "version": "0.1.0"})
    assert channel.present and channel.send({"type": "x"}) is True


def test_cells_with_the_extension_one_cell_per_call_with_outputs(shell):
    channel, comms, _ = lab_for(shell)
    shell.user_ns["bot"] = ScriptedProvider([
        run_python("total = 1 + 2\nprint('total', total)"),
        run_python("1 / 0"),  # failed: not a cell
        run_python("total * 2"),
        "done",
    ])
    shell.rl_next_input = None
    shell.run_cell_magic("agent", "--provider bot --permission auto --cells --max-steps 5", "compute")
    assert shell.rl_next_input is None  # no one-cell fallback
    [message] = comms[0].of_type("cells")
    result = shell.user_ns["_agent"]
    assert message["cell_id"] == "cell-agent-1"
    assert (message["session"], message["turn"]) == (result.session_id, result.turn_id)
    assert [c["source"] for c in message["cells"]] == ["total = 1 + 2\nprint('total', total)", "total * 2"]
    first, second = (c["outputs"] for c in message["cells"])
    assert first[0]["output_type"] == "stream" and "total 3" in first[0]["text"]
    assert "6" in json.dumps(second)
    [status] = comms[0].of_type("status")
    assert status["session"] == result.session_id and status["turns"] == 1
    assert status["context_tokens"] > 0 and status["context_level"] == "ok"


def test_without_the_extension_or_a_cell_id_cells_fall_back_to_set_next_input(shell, settle_clock):
    channel, comms, _ = lab_for(shell, ready=False)
    shell.user_ns["bot"] = ScriptedProvider([run_python("a = 1"), "ok"])
    shell.rl_next_input = None
    shell.run_cell_magic("agent", "--provider bot --permission auto --cells", "set a")
    assert "a = 1" in shell.rl_next_input and comms[0].sent == []

    channel, comms, _ = lab_for(shell, cell_id=None)  # e.g. classic Notebook sends no cellId
    shell.user_ns["bot"] = ScriptedProvider([run_python("b = 2"), "ok"])
    shell.rl_next_input = None
    shell.run_cell_magic("agent", "--provider bot --permission auto --cells", "set b")
    assert "b = 2" in shell.rl_next_input and comms[0].of_type("cells") == []
    assert comms[0].of_type("status")  # the status bar still gets its figures


def test_a_closed_comm_means_no_extension(shell):
    channel, comms, _ = lab_for(shell)
    comms[0].close_from_frontend()
    assert not channel.present
    shell.user_ns["bot"] = ScriptedProvider([run_python("c = 3"), "ok"])
    shell.rl_next_input = None
    shell.run_cell_magic("agent", "--provider bot --permission auto --cells", "set c")
    assert "c = 3" in shell.rl_next_input


def test_a_comm_the_extension_opens_after_a_reload_is_adopted(shell):
    channel, comms, manager = lab_for(shell, ready=False)
    reopened = FakeComm()
    manager.targets[KERNEL_TARGET](reopened, {"content": {"data": {"version": "0.1.0"}}})
    assert channel.present and channel.comm is reopened and comms[0].closed
    reopened.receive({"type": "status", "request_id": 7})
    [reply] = reopened.of_type("status_reply")
    assert reply["request_id"] == 7 and "session:" in reply["text"] and "tokens this kernel" in reply["text"]


def test_a_frontend_that_connects_after_turns_ran_gets_the_status_at_once(shell, settle_clock):
    """A page reload (or a late ``ready``) must not leave the status bar at "no turn yet"
    until the next turn: the channel sends the session's figures when it connects."""
    channel, comms, manager = lab_for(shell, ready=False)
    comms[0].receive({"type": "ready", "version": "0.1.0"})
    assert comms[0].of_type("status") == []  # no turn yet: nothing to say
    comms[0].close_from_frontend()
    shell.user_ns["bot"] = ScriptedProvider(["hello"])
    shell.run_cell_magic("agent", "--provider bot", "say hello")
    assert not channel.present
    reopened = FakeComm()
    manager.targets[KERNEL_TARGET](reopened, {"content": {"data": {"version": "0.1.0"}}})
    [status] = reopened.of_type("status")
    assert status["turns"] == 1 and status["session"] == shell.user_ns["_agent"].session_id
    reopened.receive({"type": "ready", "version": "0.1.0"})  # a late "ready" on the same comm
    assert len(reopened.of_type("status")) == 2


def test_inspect_request_returns_the_last_snapshot_or_a_message(shell):
    channel, comms, _ = lab_for(shell)
    comms[0].receive({"type": "inspect", "request_id": 1})
    assert "no turns yet" in comms[0].of_type("inspect_reply")[0]["error"]
    shell.user_ns["bot"] = ScriptedProvider(["hello"])
    shell.run_cell_magic("agent", "--provider bot", "say hello")
    comms[0].receive({"type": "inspect", "request_id": 2})
    reply = comms[0].of_type("inspect_reply")[-1]
    kinds = [p["kind"] for p in reply["snapshot"]["parts"]]
    assert kinds[0] == "system" and "history" in kinds
    assert reply["total_tokens"] > 0 and reply["turn"] == 1


def test_fix_request_returns_the_proposed_cell_and_its_diff(shell):
    channel, comms, _ = lab_for(shell)
    comms[0].receive({"type": "fix", "request_id": 3, "cell_id": "c9"})
    assert "no cell has failed" in comms[0].of_type("fix_reply")[0]["error"]
    shell.run_cell("x = 10\ny = x / 0\n", store_history=True)
    count = shell.execution_count - 1
    shell.user_ns["bot"] = ScriptedProvider(["Division by zero.\n\n```python\nx = 10\ny = x / 2\n```"])
    shell.run_line_magic("config", 'AgentMagics.provider = "bot"')
    comms[0].receive({"type": "fix", "request_id": 4, "cell_id": "c9", "execution_count": count})
    reply = comms[0].of_type("fix_reply")[-1]
    assert reply["request_id"] == 4 and reply["cell_id"] == "c9" and reply["error_type"] == "ZeroDivisionError"
    assert reply["fixed"] == "x = 10\ny = x / 2\n" and "-y = x / 0" in reply["diff"]
    assert reply["explanation"] == "Division by zero."
    assert shell.magics_manager.registry["AgentMagics"].last_fix.fixed == reply["fixed"]


def test_mark_best_on_a_saved_comparison_records_the_decision(shell):
    """#40: the finished comparison's view (no widget behind it) marks the best run through
    the extension's comm; a comparison this kernel's log does not know says so."""
    from jupyter_brain.compare import comparison_history

    channel, comms, _ = lab_for(shell)
    shell.user_ns["bot"] = ScriptedProvider(["Final Answer: 42"], repeat=True)
    shell.run_cell_magic("compare", "--strategies react,cot --provider bot", "What is 6*7?")
    comparison_id = shell.user_ns["_compare"].comparison_id
    comms[0].receive({"type": "mark_best", "request_id": 5, "comparison_id": comparison_id, "strategy": "cot", "run": 1})
    reply = comms[0].of_type("mark_best_reply")[-1]
    assert reply["request_id"] == 5 and "error" not in reply and reply["decision"]["strategy"] == "cot"
    log = shell.magics_manager.registry["AgentMagics"].manager.event_log
    assert comparison_history(log)[-1]["winner"] == "cot"
    comms[0].receive({"type": "mark_best", "request_id": 6, "comparison_id": comparison_id, "strategy": "tot"})
    assert "not in this comparison" in comms[0].of_type("mark_best_reply")[-1]["error"]
    comms[0].receive({"type": "mark_best", "request_id": 7, "comparison_id": "gone", "strategy": "cot"})
    assert "earlier session" in comms[0].of_type("mark_best_reply")[-1]["error"]


def test_unknown_messages_are_ignored_and_errors_come_back_as_text(shell):
    channel, comms, _ = lab_for(shell)
    comms[0].receive({"type": "nonsense"})
    comms[0].receive("not a dict")
    assert comms[0].sent == []


def test_current_cell_id_reads_the_kernel_parent_header():
    class Kernel:
        def get_parent(self):
            return {"metadata": {"cellId": "abc"}}

    class Shell:
        kernel = Kernel()

    assert current_cell_id(Shell()) == "abc"
    assert current_cell_id(object()) is None


def test_call_outputs_rich_first_then_figures_and_a_size_cap():
    rich = [{"mime_type": "text/html", "data": "<table></table>", "role": "value"},
            {"mime_type": "text/markdown", "data": "**hi**", "role": "display"}]
    outs = call_outputs("Out: ...", rich, ["data:image/png;base64,iVBOR", "javascript:alert(1)"])
    assert [o["output_type"] for o in outs] == ["execute_result", "display_data", "display_data"]
    assert outs[2]["data"] == {"image/png": "iVBOR"}  # a non-image URL is dropped
    assert call_outputs("(no output)", [], []) == []
    big = call_outputs("", [{"mime_type": "text/html", "data": "x" * 300_000, "role": "value"}], [])
    assert big == [{"output_type": "stream", "name": "stdout", "text": "[more output left out]\n"}]


@pytest.fixture()
def settle_clock(monkeypatch):
    """The settle wait's clock, moving only as the wait sleeps: the outcome never depends on
    how fast a loaded machine runs the loop."""
    import types

    from jupyter_brain.notebook import lab_channel

    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    monkeypatch.setattr(lab_channel, "time", types.SimpleNamespace(monotonic=lambda: now[0], sleep=sleep))
    return now


def _pumped_channel(shell, ready_after_s: float | None, settle_clock):
    """A channel whose extension answers ``ready`` once the (fake) clock reaches
    ``ready_after_s`` after %load_ext, while messages are pumped (Run All)."""
    magics = shell.magics_manager.registry["AgentMagics"]
    comms: list[FakeComm] = []
    pumped = []

    def pump():
        pumped.append(settle_clock[0])
        if ready_after_s is not None and settle_clock[0] >= ready_after_s and channel.version is None:
            comms[0].receive({"type": "ready", "version": "0.1.0"})

    channel = LabChannel(magics, create_comm=lambda **kw: comms.append(FakeComm(**kw)) or comms[-1],
                         comm_manager=FakeManager(), pump=pump)
    magics.lab = channel
    channel.start()
    return channel, comms, pumped


def test_a_turn_waits_for_the_extensions_answer_counted_from_load_ext(shell, settle_clock):
    channel, _, pumped = _pumped_channel(shell, 0.05, settle_clock)
    assert not channel.present
    channel.settle()
    assert channel.present and pumped and settle_clock[0] < 0.1
    channel.version = None
    settle_clock[0] = 2.0  # past SETTLE_S after %load_ext: no second wait
    before = len(pumped)
    channel.settle()
    assert len(pumped) == before


def test_settle_gives_up_when_no_answer_comes(shell, settle_clock):
    channel, _, pumped = _pumped_channel(shell, None, settle_clock)
    channel.settle(timeout_s=0.1)
    assert not channel.present and pumped
    assert settle_clock[0] >= 0.1  # it waited out its time, pumping meanwhile


def test_cells_wait_longer_for_a_slow_extension_and_still_go_to_it(shell, settle_clock):
    """A loaded browser answered after 4 s: the status bar would not have waited, but a
    --cells turn does, so its calls still become one cell each (not the one-cell fallback)."""
    channel, comms, _ = _pumped_channel(shell, 4.0, settle_clock)
    shell.parent_header = {"metadata": {"cellId": "cell-agent-1"}}
    shell.user_ns["bot"] = ScriptedProvider([run_python("a = 1"), run_python("b = 2"), "ok"])
    shell.rl_next_input = None
    shell.run_cell_magic("agent", "--provider bot --permission auto --cells", "set a and b")
    assert channel.present and settle_clock[0] >= 4.0
    [message] = comms[0].of_type("cells")
    assert [c["source"] for c in message["cells"]] == ["a = 1", "b = 2"]
    assert shell.rl_next_input is None


def test_a_closed_comm_ends_the_cells_wait_at_once(shell, settle_clock):
    channel, comms, pumped = _pumped_channel(shell, None, settle_clock)
    comms[0].close_from_frontend()  # JupyterLab without the extension closes the comm
    channel.settle(timeout_s=20)
    assert not channel.present and pumped == [] and settle_clock[0] == 0.0


def test_colab_never_waits_for_the_extension(shell, settle_clock, monkeypatch):
    import sys
    import types

    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    channel, _, pumped = _pumped_channel(shell, None, settle_clock)
    channel.settle(timeout_s=20)
    assert pumped == [] and settle_clock[0] == 0.0 and channel.settle_skipped == 1


def test_no_api_key_reaches_the_extension(shell, monkeypatch):
    key = "sk-ant-api03-" + "k" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    channel, comms, _ = lab_for(shell)
    shell.user_ns["bot"] = ScriptedProvider([
        run_python("import os\nprint(os.environ['ANTHROPIC_API_KEY'])"),
        run_python(f"token = '{key}'"),
        "done",
    ])
    shell.run_cell_magic("agent", "--provider bot --permission auto --cells --max-steps 5", "show the key")
    [message] = comms[0].of_type("cells")
    assert len(message["cells"]) == 2
    assert key not in json.dumps(comms[0].sent)
    assert "[REDACTED]" in json.dumps(message)
