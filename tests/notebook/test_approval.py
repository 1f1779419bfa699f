"""Approval in ask mode: events around the approver, the notebook approver's card / stdin
fallback / timeout, and the AgentView's handling of browser messages."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.events import ApprovalDecision, ApprovalRequest, EventLog
from jupyter_brain.agent.executor import Approval
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.history import history_problems
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.notebook.approval import READY_WAIT_S, NotebookApprover, ask_on_stdin
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.widgets import AgentView, TextView


def _preview(arguments: dict) -> dict:
    return {"path": arguments.get("path", "?"), "diff": f"+{arguments.get('text', '')}\n", "new_file": True}


@tool(effect="write", preview=_preview)
def save(path: str, text: str) -> str:
    """Pretend to save a file."""
    return f"saved {path}"


@tool(effect="execute")
def run_code(code: str) -> str:
    """Pretend to run code."""
    return "ran"


def _turn(approver, tools=(save, run_code), *, calls=None, on_event=None, timeout_s=60):
    calls = calls or [{"name": "save", "arguments": {"path": "a.txt", "text": "hi"}}]
    provider = ScriptedProvider([{"text": "Saving.", "tool_calls": calls}, "Done."])
    log = EventLog(":memory:")
    harness = AgentHarness(provider, AgentToolRegistry(list(tools), permission_mode="ask"), log,
                           approver=approver, timeout_s=timeout_s)
    result = harness.run_turn("s", [], "save it", on_event=on_event)
    return result, log, provider


def test_request_and_decision_events_carry_the_preview_and_provenance() -> None:
    result, log, provider = _turn(lambda call, spec, args: Approval(True, channel="widget"))
    events = log.events()
    req = next(e for e in events if isinstance(e, ApprovalRequest))
    dec = next(e for e in events if isinstance(e, ApprovalDecision))
    assert (req.name, req.effect, req.arguments) == ("save", "write", {"path": "a.txt", "text": "hi"})
    assert req.preview == {"path": "a.txt", "diff": "+hi\n", "new_file": True}
    assert (dec.approved, dec.by, dec.channel) == (True, "user", "widget")
    assert req.seq < dec.seq
    assert result.tool_calls[0].status == "ok"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (False, "the user denied this call"),
        (Approval(False, by="timeout"), "did not answer before the approval timeout"),
        (Approval(False, by="no_frontend"), "no way to ask the user here"),
    ],
)
def test_a_denial_goes_back_to_the_model_as_a_tool_result(answer, expected) -> None:
    result, log, provider = _turn(lambda call, spec, args: answer)
    record = result.tool_calls[0]
    assert record.status == "denied"
    tool_msg = next(m for m in result.messages if m["role"] == "tool")
    assert expected in tool_msg["content"]
    # the model's next request carries the denial
    second_request = provider.calls[1]["messages"]
    assert any(m.get("role") == "tool" and expected in m["content"] for m in second_request)
    assert history_problems(result.messages, require_final_assistant=True) == []


def test_time_waiting_for_the_user_does_not_count_against_the_turn(monkeypatch) -> None:
    import functools

    import jupyter_brain.agent.executor as executor_mod  # measures the wait
    from jupyter_brain.agent.loop import turn as turn_module  # where the loop builds its budget
    from jupyter_brain.agent.budget import TurnBudget

    clock = [1000.0]
    monkeypatch.setattr(executor_mod.time, "monotonic", lambda: clock[0])
    # The turn's deadline runs on the same clock: had the 500 s counted, the turn would time out.
    monkeypatch.setattr(turn_module, "TurnBudget", functools.partial(TurnBudget, clock=lambda: clock[0]))

    def slow_user(call, spec, args):
        clock[0] += 500  # far beyond the turn's 60 s
        return True

    result, log, _ = _turn(slow_user, timeout_s=60)
    assert result.status == "completed"
    dec = next(e for e in log.events() if isinstance(e, ApprovalDecision))
    assert dec.waited_ms == pytest.approx(500_000)


def test_ctrl_c_while_the_card_waits_ends_the_turn_cleanly() -> None:
    def interrupted(call, spec, args):
        raise KeyboardInterrupt

    result, log, _ = _turn(interrupted)
    assert result.status == "interrupted"
    assert history_problems(result.messages, require_final_assistant=True) == []
    assert any(e.type == "turn_end" for e in log.events())


def test_read_tools_and_auto_mode_never_ask() -> None:
    asked = []
    provider = ScriptedProvider([{"tool_calls": [{"name": "save", "arguments": {"path": "a", "text": "b"}}]}, "ok"])
    harness = AgentHarness(provider, AgentToolRegistry([save], permission_mode="auto"), EventLog(":memory:"),
                           approver=lambda *a: asked.append(a) or True)
    result = harness.run_turn("s", [], "go")
    assert result.tool_calls[0].status == "ok" and asked == []


# ── NotebookApprover ─────────────────────────────────────────────────────────


class FakeView:
    def __init__(self, ready_after: int | None = 0, decide_after: int | None = None, approved: bool = True) -> None:
        self.polls = 0
        self.ready_after = ready_after
        self.decide_after = decide_after
        self.approved = approved

    @property
    def frontend_ready(self) -> bool:
        return self.ready_after is not None and self.polls >= self.ready_after

    def decision_for(self, call_id: str):
        if self.decide_after is not None and self.polls >= self.decide_after:
            return self.approved
        return None


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


class Call:
    id = "c1"
    name = "save"


class Spec:
    name = "save"
    effect = "write"


def _approver(view, clock, *, timeout=10.0, stdin=None):
    def pump():
        view.polls += 1

    return NotebookApprover(view, timeout_s=timeout, pump=pump, clock=clock, sleep=clock.sleep,
                            stdin=stdin or (lambda *a: pytest.fail("stdin must not be asked")))


@pytest.mark.parametrize("approved", [True, False])
def test_the_card_decision_is_read_while_pumping(approved) -> None:
    clock = Clock()
    view = FakeView(decide_after=5, approved=approved)
    answer = _approver(view, clock)(Call(), Spec(), {})
    assert answer == Approval(approved, by="user", channel="widget")
    assert view.polls == 5


def test_no_answer_before_the_timeout_is_a_denial() -> None:
    clock = Clock()
    answer = _approver(FakeView(), clock, timeout=3.0)(Call(), Spec(), {})
    assert answer == Approval(False, by="timeout", channel="widget")
    assert 3.0 <= clock.now < 3.2


def test_without_a_drawn_card_it_falls_back_to_stdin() -> None:
    clock = Clock()
    asked = []
    approver = _approver(FakeView(ready_after=None), clock,
                         stdin=lambda call, spec, args: asked.append(call.id) or Approval(True, channel="stdin"))
    assert approver(Call(), Spec(), {}) == Approval(True, channel="stdin")
    assert asked == ["c1"] and READY_WAIT_S <= clock.now < READY_WAIT_S + 0.2


def test_no_view_asks_on_stdin_directly() -> None:
    approver = NotebookApprover(None, stdin=lambda call, spec, args: Approval(False, channel="stdin"))
    assert approver(Call(), Spec(), {}) == Approval(False, channel="stdin")


def test_stdin_prompt_answers_and_missing_stdin() -> None:
    assert ask_on_stdin(Call(), Spec(), {"path": "a"}, ask=lambda prompt: "y").approved
    assert not ask_on_stdin(Call(), Spec(), {}, ask=lambda prompt: "").approved

    class StdinNotImplementedError(RuntimeError):
        pass

    def no_stdin(prompt):
        raise StdinNotImplementedError("raw_input was called, but this frontend does not support input requests")

    assert ask_on_stdin(Call(), Spec(), {}, ask=no_stdin) == Approval(False, by="no_frontend", channel="stdin")


def test_bad_timeout_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        NotebookApprover(None, timeout_s=0)


# ── AgentView / TextView ─────────────────────────────────────────────────────


def test_agent_view_records_ready_and_the_first_click_only() -> None:
    view = AgentView()
    assert view.decision_for("c1") is None and not view.frontend_ready
    view._on_frontend_msg(view, {"kind": "ready"}, [])
    assert view.frontend_ready
    view._on_frontend_msg(view, {"kind": "approval", "call_id": "c1", "approved": True}, [])
    view._on_frontend_msg(view, {"kind": "approval", "call_id": "c1", "approved": False}, [])
    view._on_frontend_msg(view, {"kind": "approval", "call_id": 3, "approved": False}, [])
    view._on_frontend_msg(view, "junk", [])
    assert view.decision_for("c1") is True


def test_text_view_and_transcript_show_the_request_and_decision() -> None:
    import io

    out = io.StringIO()
    view = AgentView()
    text = TextView(out)

    def both(event):
        view.handle(event)
        text.handle(event)

    _turn(lambda *a: Approval(False, by="timeout", channel="widget"), on_event=both)
    printed = out.getvalue()
    assert "? approval needed: save (write)" in printed
    assert "│ +hi" in printed
    assert "✗ denied (no answer before the approval timeout)" in printed
    md = view.to_markdown()
    assert "**Approval needed** for `save` (write)" in md and "```diff\n+hi" in md
    view.close()
