"""What every reasoning strategy is: a named prompt, the labels it asks for, a convergence rule.

A strategy owns both sides of its format: ``system_prompt`` asks the model for labelled
lines and ``labels`` tells the parser which label words open which kind of step, so the
two cannot drift apart unnoticed (a test checks every prompt against its labels).
"""

from __future__ import annotations

from typing import ClassVar

from .parser import StrategyParser, register_labels
from .steps import FinalAnswer, StrategyStep

TOOLS_NOTE = (
    "Tools are called through the tool-calling interface, not by writing them as text; "
    "write the labelled lines around your tool calls so your reasoning can be followed."
)


class ReasoningStrategy:
    """Base class: a named prompt plus a convergence rule."""

    key: str = ""
    name: str = ""
    description: str = ""
    #: Label word (a regex, matched case-insensitively) → the step kind it opens
    #: (``parser.LABEL_KINDS``); every one of them is asked for in the prompt's format.
    labels: ClassVar[dict[str, str]] = {}
    #: Spellings the parser also recognises though the prompt does not ask for them
    #: (models write the long or classic forms anyway).
    extra_labels: ClassVar[dict[str, str]] = {}
    #: Whether "=== Decision Point ===" lines separate groups of candidates.
    decision_points: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.key and cls.labels:  # the parser finds a strategy's labels by its key
            register_labels(cls)

    def __init__(self, max_steps: int = 15) -> None:
        self._max_steps = max_steps

    @property
    def max_steps(self) -> int:
        return self._max_steps

    def system_prompt(self, agent_id: str, working_directory: str) -> str:
        raise NotImplementedError

    def is_complete(self, steps: list[StrategyStep]) -> bool:
        if len(steps) >= self.max_steps:
            return True
        return any(isinstance(s, FinalAnswer) for s in steps)

    def limit_reached(self, steps: list[StrategyStep], model_calls: int) -> bool:
        """Whether the harness must stop the turn for this strategy's own limits.

        The prompt promises at most ``max_steps`` reasoning cycles; one model call is one
        cycle (a call writes several labelled steps), so cycles are counted here, not
        parsed steps. A final answer is not a limit: the model sees its tool results.
        """
        return model_calls >= self.max_steps

    def parser(self) -> StrategyParser:
        return StrategyParser(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(max_steps={self.max_steps})"
