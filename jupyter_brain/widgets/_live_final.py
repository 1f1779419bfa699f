"""A strategy turn's final answer, streamed by the text view as it arrives.

The text view holds a strategy step's text until its parsed rows replace it (a terminal
cannot take text back). The loop's parser closes the Final Answer step only when the model's
stream ends, so ``--strategy react`` showed nothing until the answer was complete (issue #26).
``LiveFinal`` watches each step's held text for the strategy's ``Final Answer:`` label line;
once it is there, the view prints the rows before it (parsed here exactly as the loop's parser
will parse them: a label line closes the step before it as the stream's end does) and then
streams the answer. The rows' events that follow for those steps are skipped by count, so
nothing is shown twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from jupyter_brain.agent.strategies.names import canonical_strategy
from jupyter_brain.agent.strategies.parser import FINAL_ANSWER, StrategyParser

# Like the parser's label lines ("Final Answer:", "**Final Answer:**", "- Final answer:").
_FINAL_LINE = re.compile(
    rf"^[ \t]*(?:[-*>][ \t]+)?(?:#+[ \t]*)?(\*\*|__)?[ \t]*{FINAL_ANSWER}[ \t]*(?:\*\*|__)?[ \t]*:"
    rf"[ \t]*(?(1)(?:\*\*|__)?)[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)
_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)


@dataclass
class Opened:
    """What to print when a step's final answer begins: the rows not printed yet, the text
    before the final label (its preamble goes first if no row of the step was printed), the
    answer so far."""

    rows: list[dict[str, Any]]
    before: str
    answer: str


@dataclass
class _Step:
    seen_rows: int = 0  # strategy_step events received for the step
    own_rows: int = 0  # rows the view printed itself (their events are skipped)
    shown: int = -1  # index in the held text up to which the answer was written (-1: not live)


class LiveFinal:
    """Per turn, per step: where a held text's final answer starts, and which rows to skip."""

    def __init__(self, strategy_name: str) -> None:
        try:
            self.key: str | None = canonical_strategy(strategy_name)
            StrategyParser(self.key)
        except ValueError:  # a user's strategy without the built-in labels: held as before
            self.key = None
        self._steps: dict[int, _Step] = {}

    def _step(self, step: int) -> _Step:
        return self._steps.setdefault(step, _Step())

    def live(self, step: int) -> bool:
        return self._step(step).shown >= 0

    def open(self, step: int, held: str) -> Opened | None:
        """The step's final answer has begun in ``held``: what to print first (else None)."""
        state = self._step(step)
        if self.key is None or state.shown >= 0:
            return None
        match = next((m for m in _FINAL_LINE.finditer(held) if not _inside_fence(held, m.start())), None)
        if match is None:
            return None
        parser = StrategyParser(self.key)
        before = held[: match.start()]
        steps = parser.feed(before) + parser.finish()
        rows = [s.model_dump() for s in steps[state.seen_rows:]]
        state.own_rows = len(steps)
        state.shown = len(held)
        return Opened(rows, before, held[match.end():])

    def more(self, step: int, held: str) -> str:
        """The answer text that arrived since the last call (the step is live)."""
        state = self._step(step)
        new, state.shown = held[state.shown:], len(held)
        return new

    def row_event(self, step: int) -> bool:
        """A strategy_step event of ``step`` arrived: True when the view already printed that row."""
        state = self._step(step)
        state.seen_rows += 1
        return state.seen_rows <= state.own_rows

    def forget(self, step: int) -> None:
        """The step's attempt failed (a retry): its text and rows start over."""
        self._steps.pop(step, None)


def _inside_fence(text: str, at: int) -> bool:
    return len(_FENCE.findall(text[:at])) % 2 == 1
