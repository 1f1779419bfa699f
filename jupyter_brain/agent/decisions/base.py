"""Runtime decisions: one record per turn of what the harness chose and what came of it,
and the observer role that learns from finished turns."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from ..results import TurnResult


class RuntimeDecisionRecord(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validators built on first use, not at import (#40)

    session_id: str
    turn_id: str
    kind: str = "turn"  # "turn"; "compare_best" for %%compare's "Mark best"
    created: float = Field(default_factory=time.time)
    provider: str = ""
    model: str = ""
    strategy: str | None = None
    think_level: str = "off"
    tools_offered: list[str] = Field(default_factory=list)
    tools_used: list[str] = Field(default_factory=list)
    steps: int = 0
    status: str = ""
    stop_reason: str = ""  # why it stopped, in words
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    duration_s: float = 0.0
    prompt: dict[str, Any] = Field(default_factory=dict)  # prompt provenance
    run_context: dict[str, Any] = Field(default_factory=dict)
    detail: dict[str, Any] = Field(default_factory=dict)  # kind-specific (the compared runs, ...)


@runtime_checkable
class RuntimeDecisionStore(Protocol):
    def record(self, record: RuntimeDecisionRecord) -> None: ...


@runtime_checkable
class AutonomousResearchLearner(Protocol):
    """Observes finished turns (``observe``) to do better on later ones."""

    def observe(self, turn: TurnResult) -> None: ...
