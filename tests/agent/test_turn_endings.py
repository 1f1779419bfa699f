"""#12 items 3, 4, 6 and 8 on the harness side: truncated tool calls are never run,
refusals end as "refused", estimated usage is marked, transient failures are retried."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from typing import Any

from jupyter_brain.agent.cost import SessionCostTracker
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.history import history_problems
from jupyter_brain.agent.retry import RetryPolicy, is_transient
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.base import (
    ProviderError,
    ProviderResult,
    StreamEvent,
    ToolCall,
    Usage,
)
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.widgets import TextView
from jupyter_brain.widgets._fold import fold
from jupyter_brain.widgets.text_view import events_to_markdown

RAN: list[dict[str, Any]] = []


@tool
def save(path: str = "out.txt", text: str = "") -> str:
    """Write text to a file (all arguments optional: a truncated call must still not run)."""
    RAN.append({"path": path, "text": text})
    return "saved"


def _run(provider: Any, **kw: Any) -> tuple[Any, list[Any], AgentHarness]:
    events: list[Any] = []
    harness = AgentHarness(provider, AgentToolRegistry([save]), EventLog(), **kw)
    harness.retry = RetryPolicy(wait=lambda s, cancel: bool(cancel and cancel.is_set()))
    result = harness.run_turn("s", [], "go", on_event=events.append)
    return result, events, harness


# ── item 3: truncated tool calls ────────────────────────────────────────────────


def test_a_truncated_call_is_never_run_and_the_model_is_told() -> None:
    RAN.clear()
    partial = '{"path": "notes.txt", "text": "a very long te'
    cut = ProviderResult(text="Saving.", stop_reason="max_tokens", tool_calls=[
        ToolCall(id="c1", name="save", arguments={}, raw_arguments=partial, truncated=True)])
    provider = ScriptedProvider([cut, "Retried with less."])
    result, events, _ = _run(provider, stream=True)
    assert RAN == []  # all its arguments are optional: before, it would have run with {}
    assert result.status == "completed"
    end = next(e for e in events if e.type == "tool_call_end")
    assert end.status == "truncated" and "output limit" in (end.error or "")
    told = next(m for m in result.messages if m["role"] == "tool")
    assert told["is_error"] and "cut off by the output token limit" in told["content"]
    assert partial in told["content"] and "Retry with a shorter call" in told["content"]
    assert history_problems(result.messages, require_final_assistant=True) == []
    out = io.StringIO()
    TextView(out).replay(events)
    assert "✂ save · truncated" in out.getvalue()


def test_the_clip_of_a_long_truncated_call() -> None:
    RAN.clear()
    raw = '{"text": "' + "x" * 5000
    cut = ProviderResult(stop_reason="max_tokens", tool_calls=[
        ToolCall(id="c1", name="save", raw_arguments=raw, truncated=True)])
    result, _, _ = _run(ScriptedProvider([cut, "ok"]))
    told = next(m for m in result.messages if m["role"] == "tool")
    assert len(told["content"]) < 800 and "(5010 chars)" in told["content"] and RAN == []


# ── item 4: refusals ────────────────────────────────────────────────────────────


def test_a_refusal_ends_the_turn_as_refused_with_its_reason() -> None:
    refusal = ProviderResult(text="I can", stop_reason="refusal", refusal="I can't help with that request.")
    result, events, _ = _run(ScriptedProvider([refusal]), stream=True)
    assert result.status == "refused"
    assert result.text == "I can't help with that request."
    assert result.messages[-1] == {"role": "assistant", "content": "I can\n\nI can't help with that request."}
    assert history_problems(result.messages, require_final_assistant=True) == []
    end = events[-1]
    assert end.type == "turn_end" and end.status == "refused" and end.text == result.text
    # the views say it plainly; the replayed entry keeps the reason for the card
    assert fold(events)[-1]["text"] == "I can't help with that request."
    out = io.StringIO()
    TextView(out).replay(events)
    assert "⊘ Refused — the model declined to answer: I can't help with that request." in out.getvalue()
    assert "refused: the model declined" in out.getvalue()
    assert "**⊘ Refused — the model declined to answer: I can't help" in events_to_markdown(events)


def test_a_refusal_without_a_reason_gets_a_note_and_runs_no_tool() -> None:
    RAN.clear()
    refusal = ProviderResult(stop_reason="refusal", tool_calls=[ToolCall(id="c1", name="save", arguments={})])
    result, _, _ = _run(ScriptedProvider([refusal]))
    assert result.status == "refused" and result.text == "The model declined to answer." and RAN == []
    assert history_problems(result.messages, require_final_assistant=True) == []


# ── item 6: estimated usage ─────────────────────────────────────────────────────


def test_estimated_usage_is_marked_and_never_calibrates_the_counter() -> None:
    guess = ProviderResult(text="hi", usage=Usage(input_tokens=90_000, output_tokens=3, estimated=True))
    result, events, harness = _run(ScriptedProvider([guess]), cost_tracker=SessionCostTracker())
    assert result.usage_estimated and result.usage.estimated and result.steps[0].usage_estimated
    usage = next(e for e in events if e.type == "usage")
    assert usage.usage_estimated and events[-1].usage_estimated
    assert harness.counter.factor == 1.0  # 90k "reported" would have pulled it to the bound
    out = io.StringIO()
    TextView(out).replay(events)
    assert "≈ estimated" in out.getvalue()
    assert "≈ estimated" in events_to_markdown(events)
    assert harness.cost_tracker.turns[-1].estimated  # the session's cost marks it too


def test_reported_usage_is_not_marked() -> None:
    result, events, _ = _run(ScriptedProvider(["hi"]))
    assert not result.usage_estimated and not events[-1].usage_estimated


# ── item 8: transient failures mid-stream ───────────────────────────────────────


class Flaky:
    """Streams some text, then fails ``fails`` times with ``error``; then answers."""

    name = "flaky"
    model = "flaky-1"

    def __init__(self, fails: int, error: ProviderError, answer: str = "Done.") -> None:
        self.fails = fails
        self.error = error
        self.answer = answer
        self.calls = 0

    def generate(self, *a: Any, **kw: Any) -> ProviderResult:
        raise AssertionError("streaming only")

    def generate_stream(self, messages: Any, tools: Any, **kw: Any) -> Iterator[StreamEvent]:
        self.calls += 1
        if self.calls <= self.fails:
            yield StreamEvent(type="text", text=f"attempt {self.calls} partial")
            raise self.error
        yield StreamEvent(type="text", text=self.answer)
        yield StreamEvent(type="done", result=ProviderResult(text=self.answer))


OVERLOADED = ProviderError("Overloaded", kind="overloaded", retryable=True, provider="flaky")


def test_a_mid_stream_overload_is_retried_and_the_partial_text_discarded() -> None:
    waits: list[float] = []
    provider = Flaky(2, OVERLOADED)
    events: list[Any] = []
    harness = AgentHarness(provider, AgentToolRegistry([save]), EventLog(), stream=True)
    harness.retry = RetryPolicy(base_delay_s=0.5, wait=lambda s, cancel: waits.append(s) or False)
    result = harness.run_turn("s", [], "go", on_event=events.append)
    assert result.status == "completed" and result.text == "Done." and provider.calls == 3
    assert waits == [0.5, 1.0]  # exponential backoff
    retries = [e for e in events if e.type == "retry"]
    assert [(e.attempt, e.max_attempts, e.reason) for e in retries] == [(2, 3, "overloaded"), (3, 3, "overloaded")]
    assert all("partial" not in str(m.get("content")) for m in result.messages)  # not kept
    out = io.StringIO()
    TextView(out).replay(events)
    assert "↻ retrying 2/3 after: overloaded" in out.getvalue()
    md = events_to_markdown(events)
    # The answer first (issue #13), once; the discarded attempts below it, struck through.
    assert "<del>" in md and "attempt 1 partial" in md and md.count("Done.") == 1 and md.index("Done.") < md.index("<del>")


def test_attempts_run_out_then_the_turn_fails_clearly() -> None:
    provider = Flaky(5, OVERLOADED)
    result, events, _ = _run(provider, stream=True)
    assert result.status == "error" and provider.calls == 3
    assert "gave up after 3 attempts" in result.text and "overloaded" in result.text
    assert [e.type for e in events].count("retry") == 2
    assert history_problems(result.messages, require_final_assistant=True) == []


def test_a_cancel_during_the_backoff_interrupts_the_turn() -> None:
    cancel = threading.Event()
    provider = Flaky(1, OVERLOADED)
    harness = AgentHarness(provider, AgentToolRegistry([save]), EventLog(), stream=True)
    harness.retry = RetryPolicy(wait=lambda s, c: (cancel.set(), True)[1])
    result = harness.run_turn("s", [], "go", cancel=cancel)
    assert result.status == "interrupted" and provider.calls == 1


def test_what_is_retried() -> None:
    http = ProviderError("x", kind="overloaded", status_code=529, retryable=True)
    assert not is_transient(http, 5)  # the SDK retried HTTP errors already
    conn = ProviderError("x", kind="connection", retryable=True)
    assert is_transient(conn, 3) and not is_transient(conn, 0)  # a drop mid-stream, not a refused connect
    assert is_transient(ProviderError("x", kind="timeout", retryable=True), 0)
    assert not is_transient(ProviderError("x", kind="timeout", retryable=True), 4)
    assert not is_transient(ProviderError("x", kind="bad_request"), 3)
    assert not is_transient(ProviderError("bad data", kind="stream"), 3)


def test_no_retry_past_the_deadline() -> None:
    provider = Flaky(1, OVERLOADED)
    harness = AgentHarness(provider, AgentToolRegistry([save]), EventLog(), stream=True, timeout_s=5)
    harness.retry = RetryPolicy(base_delay_s=60, wait=lambda s, c: False)
    result = harness.run_turn("s", [], "go")
    assert result.status == "error" and "no time left" in result.text and provider.calls == 1


# ── issue #24: the stop message of a failed turn ends its error with one full stop ──


def test_an_error_message_ending_in_a_period_is_not_doubled() -> None:
    provider = Flaky(1, ProviderError("Connection error.", kind="bad_request", provider="openai"))
    result, events, _ = _run(provider, stream=True)
    assert result.status == "error"
    assert ".." not in result.text
    assert "Connection error. The history is kept" in result.text
    assert ".." not in events_to_markdown(events)


def test_an_error_message_without_a_period_gets_one() -> None:
    from jupyter_brain.agent.loop.ending import sentence

    assert sentence("boom") == "boom." and sentence("Connection error.  ") == "Connection error."
    assert sentence("really?") == "really?"
