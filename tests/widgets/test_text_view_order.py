"""The plain renderings read like the AgentView (issue #13): the transcript puts the answer
first, then the summary line, then the steps; each thing is shown once; code as Python."""

from __future__ import annotations

import io

from jupyter_brain.agent.events import (
    ErrorEvent,
    StepEnd,
    StepStart,
    StrategyStepEvent,
    TextDelta,
    ToolCallArgs,
    ToolCallEnd,
    TurnEnd,
    TurnStart,
)
from jupyter_brain.agent.strategies import parse_strategy_text
from jupyter_brain.widgets import TextView, events_to_markdown

CODE = 'revenue = sales.set_index("month")["revenue"]\nprint(revenue.diff().idxmin())'
REACT_1 = "Let me compute it.\nThought: the drop is the most negative diff.\nAction: run_python"
REACT_2 = "Observation: July.\nFinal Answer: **July** had the largest drop."


def _strategy_events(step: int, text: str) -> list:
    """The model's text and the steps the ReAct parser makes of it, as the harness emits them."""
    steps = parse_strategy_text(text, "react")
    return [TextDelta(step=step, text=text)] + [
        StrategyStepEvent(step=step, strategy="ReAct", data=s.model_dump()) for s in steps
    ]


def _react_turn() -> list:
    return [
        TurnStart(user_message="Which month dropped most?", strategy="ReAct", provider="scripted", model="m"),
        StepStart(step=1),
        *_strategy_events(1, REACT_1),
        ToolCallArgs(step=1, call_id="c1", name="run_python", arguments={"code": CODE}, wave=1),
        ToolCallEnd(step=1, call_id="c1", name="run_python", status="ok", duration_ms=12, result_preview="Jul",
                    outputs=[{"mime_type": "text/markdown", "data": "**a table note**", "role": "display"},
                             {"mime_type": "text/html", "data": "<table><tr><td>1</td></tr></table>", "role": "value"}]),
        StepEnd(step=1),
        StepStart(step=2),
        *_strategy_events(2, REACT_2),
        StepEnd(step=2),
        TurnEnd(status="completed", text=REACT_2, steps=2, tool_calls=1, duration_ms=12400, cost_usd=0.0123),
    ]


def test_the_transcript_puts_the_answer_first_then_the_summary_then_the_steps() -> None:
    md = events_to_markdown(_react_turn())
    answer = md.index("**July** had the largest drop.")
    summary = md.index("**✓ completed · 2 steps · 1 tool · 12.4 s · $0.0123**")
    first_step = md.index("**Step 1**")
    assert md.index("**You:** Which month dropped most?") < answer < summary < first_step
    # Each thing once: the answer, and the labelled text the rows were parsed from.
    assert md.count("had the largest drop") == 1
    assert md.count("the drop is the most negative diff") == 1
    assert "Thought: the drop" not in md and "Final Answer:" not in md
    assert "- **Thought:** the drop is the most negative diff." in md
    assert "Let me compute it." in md  # the text before the first label stays
    # Code as a fenced Python block, not JSON with escapes.
    assert f"**Tool** `run_python` · wave 1\n\n```python\n{CODE}\n```" in md
    assert '\\n' not in md and '{"code"' not in md
    # Rich outputs once: Markdown as Markdown; raw HTML from the agent's code only as a note.
    assert md.count("**a table note**") == 1
    assert "<table>" not in md and "an HTML output (a table)" in md


def test_a_plain_turn_shows_its_streamed_answer_once_and_first() -> None:
    md = events_to_markdown([
        TurnStart(user_message="q"), StepStart(step=1), TextDelta(step=1, text="Looking."),
        ToolCallArgs(step=1, call_id="c", name="list_variables", arguments={}), StepEnd(step=1),
        StepStart(step=2), TextDelta(step=2, text="The answer is "), TextDelta(step=2, text="**42**."), StepEnd(step=2),
        TurnEnd(status="completed", text="The answer is **42**.", steps=2, duration_ms=5),
    ])
    assert md.count("The answer is **42**.") == 1
    assert md.index("The answer is **42**.") < md.index("**Step 1**") < md.index("Looking.")


def test_a_failed_turn_shows_its_error_once_above_the_steps() -> None:
    events = [
        TurnStart(user_message="q"), StepStart(step=1), TextDelta(step=1, text="Working"),
        ErrorEvent(step=1, kind="overloaded", message="model overloaded", recoverable=False),
        TurnEnd(status="error", text="model overloaded", steps=1, duration_ms=5),
    ]
    md = events_to_markdown(events)
    assert md.count("model overloaded") == 1
    assert md.index("model overloaded") < md.index("**✗ failed") < md.index("**Step 1**")
    out = io.StringIO()
    view = TextView(out)
    for e in events:
        view.handle(e)
    assert out.getvalue().count("model overloaded") == 1


def test_the_terminal_prints_strategy_rows_instead_of_the_labelled_text() -> None:
    out = io.StringIO()
    view = TextView(out)
    for e in _react_turn():
        view.handle(e)
    text = out.getvalue()
    lines = text.splitlines()
    assert "Let me compute it." in lines
    assert "  ◆ Thought: the drop is the most negative diff." in lines
    assert text.count("had the largest drop") == 1 and "Final Answer:" not in text
    start = lines.index("  ⚙ run_python [wave 1]")
    assert lines[start + 1:start + 5] == ["    ```python", '    revenue = sales.set_index("month")["revenue"]',
                                          "    print(revenue.diff().idxmin())", "    ```"]
    assert "    │ **a table note**" in lines and "    an HTML output (a table) — shown in the widget" in lines
    assert lines[-2] == "✓ completed · 2 steps · 1 tool · 12.4 s · $0.0123"


def test_a_strategy_step_without_labels_still_shows_its_text() -> None:
    out = io.StringIO()
    view = TextView(out)
    for e in [TurnStart(user_message="q", strategy="ReAct"), StepStart(step=1),
              TextDelta(step=1, text="Just an answer."), StepEnd(step=1),
              TurnEnd(status="completed", text="Just an answer.", steps=1)]:
        view.handle(e)
    assert out.getvalue().count("Just an answer.") == 1
