"""TextView and events_to_markdown: the plain renderings of the event stream."""

from __future__ import annotations

import io

from jupyter_brain.agent.events import (
    StepEnd,
    StepStart,
    ToolCallEnd,
    TurnEnd,
    TurnStart,
)
from jupyter_brain.widgets import TextView, events_to_markdown

from .scripted_events import scripted_turn


def test_markdown_fences_survive_backticks_in_output() -> None:
    md = events_to_markdown([
        TurnStart(user_message="x"),
        ToolCallEnd(step=1, call_id="c", name="sh", status="ok", result_preview="```\nnested\n```"),
        TurnEnd(status="interrupted", text=""),
    ])
    assert "````\n```\nnested\n```\n````" in md
    assert "■ interrupted" in md


def test_text_view_streams_a_readable_plain_transcript() -> None:
    out = io.StringIO()
    view = TextView(out)
    for e in scripted_turn(tokens=3):
        view.handle(e)
    text = out.getvalue()
    expected_lines = [
        "▶ Turn 1 · scripted/demo · think medium · strategy react · session default",
        "  You: Plot df",
        "  ⇣ history compacted (summarize): 12,000 → 3,000 tokens",
        "── step 1/4 ──",
        "  thinking:",
        "  │ t0 t1 t2 t3 t4 ",
        "Let me **look**:",
        "  ◆ Thought: inspect df",
        "  ⚙ python [wave 1]",  # code as a fenced Python block (issue #13)
        "    ```python",
        "    df.head()",
        "  ✓ python · ok · 1.2 s",
        "    │    a  b",
        "  ✗ read_file · error · 3 ms",
        "    │ FileNotFoundError: a.csv",
        "  ✎ reflection (after a tool error, confidence 80%):",
        "  │ The file is missing; use df.",
        "    suggested: plot df",
        "── step 2/4 ──",
        "  ⚠ error [rate_limit]: 429, retrying (the agent continues)",
        "  ✎ reflection skipped: [budget exhausted]",
        "w0 w1 w2",
        "  ◆ Final answer: plotted",
        "✓ completed · 2 steps · 2 tools · 2 reflections · 4.3 s · $0.0220",
        "  tokens in 2,200 / out 80 / cache read 0 / cache write 0",
    ]
    lines = text.splitlines()
    positions = [lines.index(line) for line in expected_lines]
    assert positions == sorted(positions), text
    assert "```python" in text and "df.head()" in text


def test_text_view_prints_the_answer_of_a_turn_that_streamed_none() -> None:
    out = io.StringIO()
    view = TextView(out)
    for e in [TurnStart(user_message="q"), StepStart(step=1), StepEnd(step=1),
              TurnEnd(status="timeout", text="partial answer", steps=1, duration_ms=60000)]:
        view.handle(e)
    lines = out.getvalue().splitlines()
    assert "partial answer" in lines
    assert "◷ stopped: time limit reached · 1 step · 1 min 00 s" in lines


def test_a_call_the_turn_gave_up_shows_no_zero_duration() -> None:
    """An interrupted call's end (from the turn's end) has no measured duration: its line
    says "interrupted", not "interrupted · 0 ms"; a measured one keeps its time."""
    events = [
        TurnStart(user_message="x"),
        ToolCallEnd(step=1, call_id="a", name="demo__slow", status="interrupted", error="the turn ended"),
        ToolCallEnd(step=1, call_id="b", name="sh", status="error", duration_ms=1500, error="boom"),
        ToolCallEnd(step=1, call_id="c", name="fast", status="ok"),
        TurnEnd(status="interrupted", text=""),
    ]
    out = io.StringIO()
    view = TextView(out)
    for e in events:
        view.handle(e)
    text = out.getvalue()
    assert "demo__slow · interrupted\n" in text and "sh · error · 1.5 s" in text and "fast · ok · 0 ms" in text
    md = events_to_markdown(events)
    assert "`demo__slow` interrupted\n" in md and "`sh` error · 1.5 s" in md and "`fast` ok · 0 ms" in md
