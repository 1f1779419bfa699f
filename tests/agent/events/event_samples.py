"""Sample events shared by the schema and store tests: one of every type, stamped."""

from __future__ import annotations

from jupyter_brain.agent.events import (
    CompactionEvent,
    ErrorEvent,
    ReflectionEvent,
    StepEnd,
    StepStart,
    StrategyStepEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ToolCallArgs,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    TurnEnd,
    TurnStart,
    UsageEvent,
)

S, T = "sess", "turn1"


def stamp(events, session=S, turn=T):
    for i, e in enumerate(events):
        e.session_id, e.turn_id, e.seq = session, turn, i
    return events


def all_kinds():
    """One event of every type, in a plausible turn order."""
    return stamp([
        TurnStart(user_message="mean price?", provider="scripted", model="m", think_level="low",
                  strategy="ReAct", max_steps=4, timeout_s=30.5, reflect_every=2),
        StepStart(step=1),
        ThinkingDelta(step=1, text="hmm"),
        ThinkingEnd(step=1),
        TextDelta(step=1, text="Let me look. "),
        ToolCallStart(step=1, call_id="c1", name="read"),
        ToolCallArgsDelta(step=1, call_id="c1", delta='{"pa'),
        ToolCallArgs(step=1, call_id="c1", name="read", arguments={"path": "a.csv", "n": [1, 2]}, wave=1, repaired=True),
        ToolCallEnd(step=1, call_id="c1", name="read", status="ok", duration_ms=12.5, wave=1,
                    result_preview="x,y", artifact="art_1", error=None),
        StrategyStepEvent(step=1, strategy="ReAct", data={"kind": "thought", "text": "t", "label": None}),
        UsageEvent(step=1, input_tokens=10, output_tokens=5, cache_read_tokens=2, cache_creation_tokens=1, cost_usd=0.001),
        ReflectionEvent(step=1, reflection="ok", confidence=0.8, trigger="tool_error", suggested_action="retry", skipped=False),
        CompactionEvent(step=1, strategy="summarize", tokens_before=1000, tokens_after=200, messages_before=10, messages_after=3),
        ErrorEvent(step=1, kind="server", message="boom", recoverable=False),
        StepEnd(step=1, stop_reason="tool_use", tool_calls=1),
        TurnEnd(status="completed", text="42", steps=1, tool_calls=1, reflections=1, input_tokens=10,
                output_tokens=5, cache_read_tokens=2, cache_creation_tokens=1, cost_usd=0.001, duration_ms=99.0),
    ])
