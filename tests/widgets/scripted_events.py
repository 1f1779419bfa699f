"""A scripted turn with every kind of event the views render (shared by the view tests)."""

from __future__ import annotations

from typing import Any

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


def scripted_turn(tokens: int = 20) -> list[Any]:
    """A turn with every kind of event the views render."""
    ev: list[Any] = [
        TurnStart(session_id="default", turn_id="t1", user_message="Plot df", provider="scripted",
                  model="demo", think_level="medium", strategy="react", max_steps=4),
        CompactionEvent(strategy="summarize", tokens_before=12000, tokens_after=3000),
        StepStart(step=1),
    ]
    ev += [ThinkingDelta(step=1, text=f"t{i} ") for i in range(5)]
    ev.append(ThinkingEnd(step=1))
    ev += [TextDelta(step=1, text=w) for w in ["Let me ", "**look**:\n\n", "```python\n", "df.head()\n", "```\n"]]
    ev += [
        StrategyStepEvent(step=1, strategy="react", data={"kind": "thought", "text": "inspect df"}),
        ToolCallStart(step=1, call_id="c1", name="python"),
        ToolCallArgsDelta(step=1, call_id="c1", delta='{"code": '),
        ToolCallArgsDelta(step=1, call_id="c1", delta='"df.head()"}'),
        ToolCallArgs(step=1, call_id="c1", name="python", arguments={"code": "df.head()"}, wave=1),
        ToolCallEnd(step=1, call_id="c1", name="python", status="ok", duration_ms=1234, wave=1,
                    result_preview="   a  b\n0  1  2"),
        ToolCallStart(step=1, call_id="c2", name="read_file"),
        ToolCallArgs(step=1, call_id="c2", name="read_file", arguments={"path": "a.csv"}, wave=2),
        ToolCallEnd(step=1, call_id="c2", name="read_file", status="error", duration_ms=3, wave=2,
                    error="FileNotFoundError: a.csv"),
        ReflectionEvent(step=1, reflection="The file is missing; use df.", confidence=0.8, trigger="tool_error",
                        suggested_action="plot df"),
        UsageEvent(step=1, input_tokens=1000, output_tokens=50, cost_usd=0.01),
        StepEnd(step=1, stop_reason="tool_use", tool_calls=2),
        StepStart(step=2),
        ErrorEvent(step=2, kind="rate_limit", message="429, retrying", recoverable=True),
        ReflectionEvent(step=2, reflection="[budget exhausted]", skipped=True),
    ]
    ev += [TextDelta(step=2, text=f"w{i} ") for i in range(tokens)]
    ev += [
        StrategyStepEvent(step=2, strategy="react", data={"kind": "final_answer", "text": "plotted"}),
        UsageEvent(step=2, input_tokens=1200, output_tokens=30, cost_usd=0.012),
        StepEnd(step=2, stop_reason="end_turn"),
        TurnEnd(session_id="default", turn_id="t1", status="completed", text="done", steps=2, tool_calls=2,
                reflections=2, input_tokens=2200, output_tokens=80, cost_usd=0.022, duration_ms=4321),
    ]
    return ev
