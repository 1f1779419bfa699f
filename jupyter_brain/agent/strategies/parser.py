"""The streaming parser: a strategy's labelled text → typed steps, while it streams.

The machinery is generic; which label words open which kind of step belongs to each
strategy (its ``labels``), so a strategy's prompt and what the parser recognises sit side
by side in one class.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

from .steps import Action, Branch, FinalAnswer, Observation, Reflection, StrategyStep, Thought

# A strategy (``base.ReasoningStrategy``, an instance or its class) as the parser reads it:
# ``key``, ``labels``, ``extra_labels``, ``decision_points``. The strategies import this
# module, so it names none of them.
Strategy = Any

#: The label pattern every strategy shares for its final answer.
FINAL_ANSWER = r"final\s+answer"

# "Action Input" continues an Action, "Revised plan" a Reflection; after any other step
# they start a labelled thought of their own (their text is never dropped).
_CONTINUATIONS = {"action_input": "action", "revised_plan": "reflect"}
_THOUGHT_LABELS = {
    "thought": None, "plan": "Plan", "verify": "Verify", "reason": "Reason",
    "action_input": "Action Input", "revised_plan": "Revised plan",
}

#: The step kinds a strategy's label may open (the values of its ``labels``).
LABEL_KINDS = frozenset(
    {*_THOUGHT_LABELS, "step", "action", "observation", "reflect", "final", "candidate", "selected"}
)

_SCORE = re.compile(r"(?:→|->|=>|—|-)?\s*\(?\s*score\s*[:=]\s*([01](?:\.\d+)?|\.\d+)\s*\)?", re.I)
_CANDIDATE_NO = re.compile(r"candidate\s+(\d+)", re.I)
_DECISION = re.compile(r"^\s*=+\s*decision\s+point\s*=*\s*$", re.I)
_FENCE = re.compile(r"^\s*(```|~~~)")


def _label_regex(labels: Mapping[str, str]) -> re.Pattern[str]:
    # Labels may be decorated as markdown: "**Thought:**", "- Action:", "### Plan:".
    words = "|".join(sorted(labels, key=len, reverse=True))
    return re.compile(
        rf"^\s*(?:[-*>]\s+)?(?:#+\s*)?(\*\*|__)?\s*({words})\s*(?:\*\*|__)?\s*:"
        rf"\s*(?(1)(?:\*\*|__)?)\s*(.*)$",
        re.IGNORECASE,
    )


_BY_KEY: dict[str, Strategy] = {}  # key -> the first strategy class that defined labels for it


def register_labels(strategy: Strategy) -> None:
    """Called for each strategy class with labels (``ReasoningStrategy.__init_subclass__``):
    its key then names its labels (the built-in one's, when a subclass keeps the key)."""
    _BY_KEY.setdefault(strategy.key, strategy)


def _strategy_class(strategy: str | Strategy) -> Any:
    """The strategy (class or instance) whose labels to use.

    A key names a strategy with labels; so does the key of a strategy without labels of its own.
    """
    if isinstance(strategy, str) or not strategy.labels:
        return _BY_KEY.get(strategy if isinstance(strategy, str) else strategy.key)
    return strategy


class StrategyParser:
    """Turns streamed strategy text into steps.

    Built from a strategy's labels: pass its key (``"react"``), the strategy itself or
    its class. Feeding the text in any chunking and then calling ``finish()`` yields
    exactly the steps of parsing it whole: a step is emitted once the next label line
    (or the end) proves it complete; ``pending()`` shows the step still being written.
    """

    def __init__(self, strategy: str | Strategy) -> None:
        spec = _strategy_class(strategy)
        if spec is None:
            raise ValueError(f"no parser for strategy {strategy!r}")
        labels: dict[str, str] = {**spec.labels, **spec.extra_labels}
        self.strategy: str = spec.key
        self._labels = labels
        self._decision_points: bool = spec.decision_points
        self._label_re = _label_regex(self._labels)
        self._kinds = [(re.compile(rf"^{w}$", re.I), k) for w, k in self._labels.items()]
        self._buffer = ""
        self._current: tuple[str, str, list[str]] | None = None  # (kind, label, lines)
        self._in_fence = False
        self._decision_point = 1
        self._candidates: dict[int, Branch] = {}
        self.steps: list[StrategyStep] = []

    def feed(self, text: str) -> list[StrategyStep]:
        self._buffer += text
        out: list[StrategyStep] = []
        while True:
            newline = self._buffer.find("\n")
            if newline < 0:
                break
            line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
            out.extend(self._line(line.rstrip("\r")))
        return out

    def finish(self) -> list[StrategyStep]:
        out: list[StrategyStep] = []
        if self._buffer:
            line, self._buffer = self._buffer, ""
            out.extend(self._line(line.rstrip("\r")))
        out.extend(self._close())
        return out

    def pending(self) -> StrategyStep | None:
        """The step currently being written (plus the unterminated line), if any.

        The unterminated line is read as if it ended now, so "Final Answer: The me…"
        already shows as the final answer in progress, not as text of the step before.
        """
        state = self
        if self._buffer:
            state = copy.copy(self)  # a throwaway fork: the real state never changes here
            state.steps = []
            state._candidates = dict(self._candidates)
            if self._current is not None:
                state._current = (self._current[0], self._current[1], list(self._current[2]))
            state._line(self._buffer.rstrip("\r"))
        if state._current is None:
            return None
        kind, label, lines = state._current
        return state._build(kind, label, lines, peek=True)

    def label_of(self, line: str) -> str | None:
        """The label word ``line`` opens a step with (``"Final Answer"``), or ``None`` for text."""
        match = self._label_regex_match(line)
        return match[0] if match is not None else None

    def _continues(self, kind: str) -> bool:
        """Whether a label line of ``kind`` continues the open step instead of starting one."""
        owner = _CONTINUATIONS.get(kind)
        return owner is not None and self._current is not None and self._current[0] == owner

    # internals -----------------------------------------------------------------
    def _kind_of(self, word: str) -> str:
        for pattern, kind in self._kinds:
            if pattern.match(word):
                return kind
        return "thought"

    def _line(self, line: str) -> list[StrategyStep]:
        if _FENCE.match(line):
            self._in_fence = not self._in_fence
            return self._append(line)
        if self._in_fence:
            return self._append(line)
        if self._decision_points and _DECISION.match(line):
            out = self._close()
            if self._candidates:
                self._decision_point += 1
                self._candidates = {}
            return out
        match = self._label_regex_match(line)
        if match is None:
            return self._append(line)
        word, rest = match
        kind = self._kind_of(word)
        current = self._current
        if current is not None and self._continues(kind):
            # Continuations that belong to the step before them.
            current[2].append(f"\x00{kind}\x00{rest}")
            return []
        out = self._close()
        self._current = (kind, word, [rest] if rest else [])
        return out

    def _label_regex_match(self, line: str) -> tuple[str, str] | None:
        m = self._label_re.match(line)
        if not m:
            return None
        return m.group(2), m.group(3)

    def _append(self, line: str) -> list[StrategyStep]:
        if self._current is not None:
            self._current[2].append(line)
        return []

    def _close(self) -> list[StrategyStep]:
        if self._current is None:
            return []
        kind, label, lines = self._current
        self._current = None
        step = self._build(kind, label, lines, peek=False)
        if step is None:
            return []
        self.steps.append(step)
        return [step]

    def _build(self, kind: str, label: str, lines: list[str], *, peek: bool) -> StrategyStep | None:
        main: list[str] = []
        extra: dict[str, list[str]] = {}
        target = main
        for line in lines:
            if line.startswith("\x00"):
                _, sub, rest = line.split("\x00", 2)
                target = extra.setdefault(sub, [])
                if rest:
                    target.append(rest)
            else:
                target.append(line)
        text = "\n".join(main).strip()
        if kind in _THOUGHT_LABELS:
            name = _THOUGHT_LABELS[kind]
            return Thought(text=text, label=name) if text or peek else None
        if kind == "step":
            number = re.sub(r"\s+", " ", label.strip()).title()
            return Thought(text=text, label=number)
        if kind == "action":
            return self._action(text, "\n".join(extra.get("action_input", [])).strip())
        if kind == "observation":
            return Observation(text=text)
        if kind == "reflect":
            plan = "\n".join(extra.get("revised_plan", [])).strip()
            return Reflection(critique=text, revised_plan=plan)
        if kind == "final":
            return FinalAnswer(text=text)
        if kind == "candidate":
            return self._candidate(label, text, peek)
        if kind == "selected":
            return self._selected(text, peek)
        return Thought(text=text)

    def _action(self, text: str, action_input: str) -> Action:
        first_line = text.splitlines()[0] if text else ""
        call = re.match(r"^`?([A-Za-z_][\w.-]*)`?\s*(?:\((.*)\))?\s*(.*)$", first_line, re.S)
        tool, args_text = (call.group(1), call.group(2) or call.group(3)) if call else (first_line, "")
        args_text = action_input or args_text or ""
        return Action(tool=tool or "?", args=_parse_args(args_text))

    def _candidate(self, label: str, text: str, peek: bool) -> Branch | None:
        number = _CANDIDATE_NO.search(label)
        branch_id = int(number.group(1)) if number else len(self._candidates) + 1
        score_match = _SCORE.search(text)
        score = float(score_match.group(1)) if score_match else 0.0
        thought = (_SCORE.sub("", text) if score_match else text).strip().rstrip("→-—=> ").strip()
        branch = Branch(branch_id=branch_id, thought=thought, score=score,
                        decision_point=self._decision_point)
        if not peek:
            self._candidates[branch_id] = branch
        return branch

    def _selected(self, text: str, peek: bool) -> Branch | Thought | None:
        number = _CANDIDATE_NO.search(text) or re.match(r"^\s*(\d+)", text)
        if not number:
            return Thought(text=text, label="Selected")
        branch_id = int(number.group(1))
        chosen = self._candidates.get(branch_id)
        score_match = _SCORE.search(text)
        score = float(score_match.group(1)) if score_match else (chosen.score if chosen else 0.0)
        return Branch(
            branch_id=branch_id,
            thought=chosen.thought if chosen else "",
            score=score,
            decision_point=self._decision_point,
            selected=True,
        )


def _parse_args(text: str) -> Any:
    text = text.strip()
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return {"input": text}


def parse_strategy_text(text: str, strategy: str | Strategy) -> list[StrategyStep]:
    parser = StrategyParser(strategy)
    parser.feed(text)
    parser.finish()
    return parser.steps


class _FinalAnswerOnly:
    """The labels every strategy shares, for text written without a strategy."""

    key = "final-answer"
    labels: Mapping[str, str] = {FINAL_ANSWER: "final"}
    extra_labels: Mapping[str, str] = {}
    decision_points = False


def final_answer(text: str, strategy: str | Strategy | None = None) -> str:
    """The answer in a model's last text: its (last) Final Answer step, without the scaffolding
    around it (``Thought:``, ``Observation:``, the label itself), else the text as written.

    With no strategy a ``Final Answer:`` line still counts (models write it unasked, and a
    strategy's label lives on in the history). ``TurnResult.text`` is this; the text as
    written stays in ``TurnResult.raw_text`` and the steps."""
    if not text or not re.search(FINAL_ANSWER, text, re.I):
        return text
    try:
        steps = parse_strategy_text(text, strategy if strategy is not None else _FinalAnswerOnly())
    except ValueError:  # a strategy without labels of its own
        steps = parse_strategy_text(text, _FinalAnswerOnly())
    answers = [s.text for s in steps if isinstance(s, FinalAnswer) and s.text.strip()]
    return answers[-1] if answers else text
