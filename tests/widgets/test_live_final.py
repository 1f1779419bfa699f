"""Terminal IPython streams a strategy turn's final answer as it arrives (issue #26): the
text view shows ``Final Answer:``'s text before the model's stream ends, and every row once."""

from __future__ import annotations

import io
import sys
from typing import Any

import pytest

from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.widgets import TextView
from jupyter_brain.widgets._live_final import LiveFinal

REACT = ("I know the figures already.\nThought: March fell by 12 percent, more than any other month.\n"
         "Final Answer: March had the largest drop,\n12 percent below February.")


class Snapshotting(ScriptedProvider):
    """Notes what the terminal showed when the model's stream is about to end."""

    shown_before_end: str = ""

    def generate_stream(self, *args: Any, **kwargs: Any) -> Any:
        for event in super().generate_stream(*args, **kwargs):
            if event.type == "done":
                Snapshotting.shown_before_end = sys.stdout.getvalue()  # type: ignore[attr-defined]
            yield event


@pytest.mark.parametrize("strategy", ["react", "none"])
def test_terminal_ipython_streams_the_answer_with_every_strategy(shell, capsys, strategy):
    shell.user_ns["bot"] = Snapshotting([REACT], chunk_words=1)
    shell.run_cell_magic("agent", f"--provider bot --strategy {strategy}", "Which month dropped most?")
    shown = capsys.readouterr().out
    assert "12 percent below February." in Snapshotting.shown_before_end  # before the stream ended
    assert shell.user_ns["_agent"].status == "completed"
    if strategy == "react":
        assert shown.count("March had the largest drop,") == 1  # once: no row repeats it at the end
        assert shown.count("◆ Thought: March fell by 12 percent") == 1
        assert "Thought: March" not in shown.replace("◆ Thought: March", "")  # the labelled text is not printed
        assert "Final Answer:" not in shown
        assert shown.index("I know the figures") < shown.index("◆ Thought") < shown.index("◆ Final answer: March")
    else:
        assert shown.count("Final Answer: March had the largest drop,") == 1


def test_rows_before_the_final_answer_that_arrive_later_are_not_printed_twice():
    """The loop's parser closes the thought only when the final label's line ends; the view
    printed it when the label came, so that row event is skipped, and the final row too."""
    from jupyter_brain.agent.events import StepEnd, StepStart, StrategyStepEvent, TextDelta, TurnEnd, TurnStart
    from jupyter_brain.agent.strategies import parse_strategy_text

    out = io.StringIO()
    view = TextView(out)
    view.handle(TurnStart(user_message="q", strategy="ReAct"))
    view.handle(StepStart(step=1))
    for piece in ["Thought: look", " at it\nFinal ", "Answer: Ma", "rch"]:
        view.handle(TextDelta(step=1, text=piece))
    assert out.getvalue().endswith("  ◆ Thought: look at it\n  ◆ Final answer: March")
    for s in parse_strategy_text("Thought: look at it\nFinal Answer: March", "react"):
        view.handle(StrategyStepEvent(step=1, strategy="ReAct", data=s.model_dump()))
    view.handle(StepEnd(step=1))
    view.handle(TurnEnd(status="completed", text="March", steps=1))
    text = out.getvalue()
    assert text.count("Thought: look at it") == 1 and text.count("March") == 1


def test_a_label_inside_a_code_fence_is_not_the_final_answer_and_unknown_strategies_hold():
    live = LiveFinal("ReAct")
    assert live.open(1, "Thought: x\n```\nFinal Answer: not yet\n") is None
    assert live.open(1, "Thought: x\n```\nFinal Answer: no\n```\nFinal Answer: yes") is not None
    assert LiveFinal("my own strategy").open(1, "Final Answer: held") is None


class Tty(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def isatty(self) -> bool:
        return True

    def flush(self) -> None:
        self.flushes += 1


def test_on_a_terminal_each_delta_is_flushed():
    """A tty's stdout is line-buffered: without a flush, no word shows until a line ends."""
    from jupyter_brain.agent.events import StepStart, TextDelta, TurnStart

    tty = Tty()
    view = TextView(tty)
    view.handle(TurnStart(user_message="q"))
    view.handle(StepStart(step=1))
    before = tty.flushes
    view.handle(TextDelta(step=1, text="March"))
    assert tty.flushes == before + 1
    piped = Tty()
    piped.isatty = lambda: False  # type: ignore[method-assign]
    quiet = TextView(piped)
    quiet.handle(TextDelta(step=1, text="March"))
    assert piped.flushes == 0
