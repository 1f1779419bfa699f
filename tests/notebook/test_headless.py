"""How the kernel tells a headless run (``notebook/headless.py``), and what it then skips:
the wait for the JupyterLab extension, and the approval wait nobody can end."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from jupyter_brain.agent.events import ApprovalDecision, EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.notebook.headless import HEADLESS_CHANNEL, HeadlessApprover, is_headless
from jupyter_brain.notebook.kernel_inputs import approver_for
from jupyter_brain.notebook.lab_channel import LabChannel
from jupyter_brain.providers.scripted import ScriptedProvider


class FakeKernel:
    def __init__(self, request: dict) -> None:
        self.request = request

    def get_parent(self) -> dict:
        return self.request


def shell_with(*, cell_id: str | None = None, allow_stdin: bool | None = False) -> SimpleNamespace:
    metadata = {"cellId": cell_id} if cell_id else {}
    content = {"code": "%%agent\nhi"} if allow_stdin is None else {"code": "x", "allow_stdin": allow_stdin}
    return SimpleNamespace(kernel=FakeKernel({"header": {}, "metadata": metadata, "content": content}))


@pytest.mark.parametrize(
    ("shell", "headless"),
    [
        (shell_with(), True),  # nbclient, nbconvert, papermill, nbval
        (shell_with(allow_stdin=None), True),  # a request that does not say: stdin is off by default
        (shell_with(cell_id="c-1", allow_stdin=True), False),  # JupyterLab, Notebook 7
        (shell_with(allow_stdin=True), False),  # VS Code, jupyter console: someone can answer
        (shell_with(cell_id="c-1"), False),  # a notebook front-end that names its cell
        (SimpleNamespace(), False),  # terminal IPython: no kernel, someone at stdin
        (None, False),
    ],
)
def test_headless_means_no_cell_id_and_no_stdin_in_a_kernel(shell, headless) -> None:
    assert is_headless(shell) is headless


def test_the_request_falls_back_to_the_shells_parent_header() -> None:
    shell = SimpleNamespace(kernel=SimpleNamespace(_allow_stdin=False),
                            parent_header={"metadata": {}, "content": {"allow_stdin": False}})
    assert is_headless(shell)
    shell.parent_header = {"metadata": {"cellId": "c"}, "content": {"allow_stdin": False}}
    assert not is_headless(shell)


class _Comm:
    def on_msg(self, fn):
        pass

    def on_close(self, fn):
        pass


def _channel(shell, pump) -> LabChannel:
    magics = SimpleNamespace(shell=shell)
    channel = LabChannel(magics, create_comm=lambda **kw: _Comm(),
                         comm_manager=SimpleNamespace(register_target=lambda *a: None), pump=pump)
    channel.start()  # the comm %load_ext opens; no extension answers it
    return channel


def test_a_headless_kernel_skips_the_settle_wait() -> None:
    channel = _channel(shell_with(), pump=lambda: pytest.fail("a headless kernel must not wait for the extension"))
    channel.settle()
    channel.settle()
    assert channel.settle_skipped == 1 and not channel.present


def test_a_headless_kernel_says_it_skipped_even_after_the_wait_would_be_over(monkeypatch) -> None:
    """The skip is counted (and no later turn waits) however long the first turn took, e.g.
    an nbclient run on a loaded machine whose first turn ends seconds after %load_ext."""
    from jupyter_brain.notebook import lab_channel

    now = [0.0]
    monkeypatch.setattr(lab_channel, "time", SimpleNamespace(monotonic=lambda: now[0], sleep=lambda s: None))
    channel = _channel(shell_with(), pump=lambda: pytest.fail("a headless kernel must not wait for the extension"))
    now[0] = 60.0  # past SETTLE_S and CELLS_SETTLE_S after the comm opened
    channel.settle()
    channel.settle(timeout_s=lab_channel.CELLS_SETTLE_S)
    assert channel.settle_skipped == 1 and not channel.present


def test_a_kernel_with_a_front_end_still_waits_for_the_extension(monkeypatch) -> None:
    from jupyter_brain.notebook import lab_channel

    now = [0.0]
    monkeypatch.setattr(lab_channel, "time", SimpleNamespace(monotonic=lambda: now[0],
                                                             sleep=lambda s: now.__setitem__(0, now[0] + s)))
    pumped: list[int] = []
    channel = _channel(shell_with(cell_id="c-1", allow_stdin=True), pump=lambda: pumped.append(1))
    channel.settle(timeout_s=0.1)
    assert pumped and channel.settle_skipped == 0


@tool(effect="execute")
def run_code(code: str) -> str:
    """Pretend to run code."""
    return "ran"


def test_a_headless_approval_is_denied_at_once_and_the_turn_goes_on() -> None:
    approver = approver_for(object(), 300.0, headless=True)
    assert isinstance(approver, HeadlessApprover)
    provider = ScriptedProvider([{"tool_calls": [{"name": "run_code", "arguments": {"code": "1"}}]}, "Could not run."])
    log = EventLog(":memory:")
    harness = AgentHarness(provider, AgentToolRegistry([run_code], permission_mode="ask"), log, approver=approver)
    result = harness.run_turn("s", [], "run it")
    assert result.status == "completed" and result.tool_calls[0].status == "denied"
    decision = next(e for e in log.events() if isinstance(e, ApprovalDecision))
    assert (decision.approved, decision.by, decision.channel) == (False, "no_frontend", HEADLESS_CHANNEL)
    told = next(m for m in provider.calls[1]["messages"] if m.get("role") == "tool")
    assert "no way to ask the user here" in told["content"]
    assert approver.denied == 1


def test_a_front_end_kernel_keeps_the_approval_card() -> None:
    from jupyter_brain.notebook.approval import NotebookApprover

    assert isinstance(approver_for(object(), 300.0), NotebookApprover)
