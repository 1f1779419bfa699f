"""#40 and #39 in the plain renderings (the Markdown transcript a saved notebook keeps): the
answer without its "Final Answer:" label, the figure the prompt asked for beside the answer
(stored once), a reflection that says each thing once, and a replayed turn's recorded cost."""

from __future__ import annotations

from jupyter_brain.agent.events import (
    ReflectionEvent,
    StepEnd,
    StepStart,
    TextDelta,
    ToolCallEnd,
    TurnEnd,
    TurnStart,
)
from jupyter_brain.widgets import events_to_markdown
from jupyter_brain.widgets.turn_bundle import turn_bundle

PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="


def _plot_turn(prompt: str, answer: str) -> list:
    return [
        TurnStart(user_message=prompt, provider="scripted", model="demo"),
        StepStart(step=1),
        ToolCallEnd(step=1, call_id="c", name="run_python", status="ok", images=[PNG]),
        StepEnd(step=1),
        StepStart(step=2),
        TextDelta(step=2, text=answer),
        StepEnd(step=2),
        TurnEnd(status="completed", text=answer, steps=2, tool_calls=1),
    ]


def test_the_figure_the_prompt_asked_for_shows_with_the_answer_once() -> None:
    md = events_to_markdown(_plot_turn("Which month fell? Plot it.", "**July** fell the most."))
    answer_at, figure_at, end_at = md.index("**July**"), md.index(f"]({PNG})"), md.index("✓ completed")
    assert answer_at < figure_at < end_at  # with the answer, above the fold
    assert md.count(PNG) == 1  # stored once: the tool row names it
    assert "*figure 1 from run_python: shown with the answer*" in md
    bundle = turn_bundle([e.model_dump() for e in _plot_turn("Plot it.", "July.")], md, fold="auto", header={},
                         plain="")
    assert PNG not in str(bundle["application/vnd.jupyter-brain.turn+json"])  # the JSON points into the Markdown


def test_a_figure_nobody_asked_for_stays_in_its_step() -> None:
    md = events_to_markdown(_plot_turn("Which month fell?", "**July** fell the most."))
    assert md.index(f"]({PNG})") > md.index("✓ completed")
    assert "shown with the answer" not in md


def test_a_final_answer_label_written_without_a_strategy_is_not_the_answer() -> None:
    text = "I listed the runs.\nFinal Answer: **cot** fails every task."
    md = events_to_markdown([
        TurnStart(user_message="Which runs failed?"), StepStart(step=1), TextDelta(step=1, text=text), StepEnd(step=1),
        TurnEnd(status="completed", text="**cot** fails every task.", steps=1),
    ])
    assert "Final Answer" not in md
    assert md.index("**cot** fails every task.") < md.index("✓ completed") < md.index("I listed the runs.")


def test_the_reflection_says_its_confidence_and_next_step_once() -> None:
    md = events_to_markdown([
        TurnStart(user_message="q"), StepStart(step=1),
        ReflectionEvent(step=1, reflection="The plot is drawn.\nConfidence: 0.9\nNext: write the answer",
                        confidence=0.9, suggested_action="write the answer", trigger="periodic"),
        TurnEnd(status="interrupted", text=""),
    ])
    assert md.count("write the answer") == 1 and "0.9" not in md and "confidence 90%" in md


def test_a_replayed_turn_shows_what_it_cost_when_recorded() -> None:
    recorded = {"input_tokens": 1234, "output_tokens": 56, "cost_usd": 0.0042, "calls": 1}
    md = events_to_markdown([
        TurnStart(user_message="q", provider="replayed", model="claude-haiku-4"),
        TurnEnd(status="completed", text="done", steps=1, cost_usd=0.0, recorded=recorded),
    ])
    assert "replayed · recorded: $0.0042** · tokens in 1,234 / out 56" in md
    assert "0.0000" not in md
    live = events_to_markdown([
        TurnStart(user_message="q", provider="anthropic", model="claude-haiku-4"),
        TurnEnd(status="completed", text="done", steps=1, cost_usd=0.0042, input_tokens=1234, output_tokens=56),
    ])
    assert "replayed" not in live.split("\n", 1)[1]
    # The same figures, once the sanitizer's mark rule removes the mark (CI's two passes).
    assert md.split("**✓")[1].replace("replayed · recorded: ", "") == live.split("**✓")[1]


def test_strategy_rows_read_the_same_whatever_the_streams_chunking() -> None:
    """Found by CI's live pass (#39): a live stream interleaves its text chunks with the parsed
    steps, a replayed one sends the text whole first; the transcript must not differ."""
    from jupyter_brain.agent.events import StrategyStepEvent

    text = "Thought: look\nObservation: Jul fell\nThought: done"
    steps = [StrategyStepEvent(step=1, strategy="react", data={"kind": "thought", "text": "look"}),
             StrategyStepEvent(step=1, strategy="react", data={"kind": "observation", "text": "Jul fell"}),
             StrategyStepEvent(step=1, strategy="react", data={"kind": "thought", "text": "done"})]
    start = [TurnStart(user_message="q", strategy="react"), StepStart(step=1)]
    end = [StepEnd(step=1), TurnEnd(status="interrupted", text="")]
    whole = [*start, TextDelta(step=1, text=text), *steps, *end]
    chunked = [*start, TextDelta(step=1, text=text[:14]), steps[0], TextDelta(step=1, text=text[14:34]), steps[1],
               TextDelta(step=1, text=text[34:]), steps[2], *end]
    assert events_to_markdown(chunked) == events_to_markdown(whole)
