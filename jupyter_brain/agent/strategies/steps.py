"""The typed steps a reasoning trace is made of (what the parser emits and views show).

Each kind is a small pydantic model with a ``kind`` tag, so a step travels as a dict in a
``strategy_step`` event and comes back as the same object (``step_from_dict``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class StrategyStep(BaseModel):
    """One step of a reasoning trace; the subclasses are the kinds."""

    # Validators built on first use: a turn without a strategy never builds them (#40).
    model_config = ConfigDict(defer_build=True)

    kind: str


class Thought(StrategyStep):
    kind: Literal["thought"] = "thought"
    text: str
    label: str | None = None  # e.g. "Plan", "Step 2", "Reason"

    def __str__(self) -> str:
        return f"{self.label or 'Thought'}: {self.text}"


class Action(StrategyStep):
    kind: Literal["action"] = "action"
    tool: str
    args: Any = Field(default_factory=dict)

    def __str__(self) -> str:
        return f"Action: {self.tool}"


class Observation(StrategyStep):
    kind: Literal["observation"] = "observation"
    text: str

    def __str__(self) -> str:
        return f"Observation: {self.text}"


class Reflection(StrategyStep):
    kind: Literal["reflection"] = "reflection"
    critique: str
    revised_plan: str = ""

    def __str__(self) -> str:
        return f"Reflection: {self.critique}"


class Branch(StrategyStep):
    kind: Literal["branch"] = "branch"
    branch_id: int
    thought: str
    score: float
    decision_point: int = 1
    selected: bool = False  # the "Selected: Candidate N" line of a decision point

    def __str__(self) -> str:
        mark = " selected" if self.selected else ""
        return f"Branch[{self.branch_id}] (score={self.score:.2f}){mark}: {self.thought}"


class FinalAnswer(StrategyStep):
    kind: Literal["final_answer"] = "final_answer"
    text: str

    def __str__(self) -> str:
        return f"Final: {self.text}"


AnyStep = Annotated[
    Thought | Action | Observation | Reflection | Branch | FinalAnswer, Field(discriminator="kind")
]
STEP_ADAPTER: TypeAdapter[AnyStep] = TypeAdapter(AnyStep, config=ConfigDict(defer_build=True))


def step_from_dict(data: dict[str, Any]) -> StrategyStep:
    return STEP_ADAPTER.validate_python(data)
