"""Two plug-ins that learn from finished turns, each failing on its own.

``DecisionRecording`` writes what the harness chose for a turn and what came of it to a
``RuntimeDecisionStore``; ``ToolLearning`` hands the finished turn to an
``AutonomousResearchLearner`` and, when semantic selection picks the tools, lets it rank
those that helped on similar questions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...decisions.base import AutonomousResearchLearner, RuntimeDecisionStore
from ...decisions.record import decision_record
from ...decisions.tool_learner import tool_boosts_of
from ...hooks import ToolOffer, TurnContext, TurnHook
from ...results import TurnResult

LOGGER = "jupyter_brain.decisions"


@dataclass(frozen=True)
class DecisionRecording:
    """``AgentHarness(decision_store=...)``: one record per turn; off without a store."""

    name: ClassVar[str] = "decision store"
    store: RuntimeDecisionStore | None

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        return None if self.store is None else DecisionRecordingHook(self.store)


class DecisionRecordingHook(TurnHook):
    name = "decision store"
    logger = LOGGER

    def __init__(self, store: RuntimeDecisionStore) -> None:
        self.store = store

    def after_turn(self, ctx: TurnContext, result: TurnResult) -> None:
        self.store.record(decision_record(
            result, provider=ctx.provider_name, model=ctx.model, strategy=ctx.strategy,
            think_level=ctx.think_level, tools_offered=ctx.tools_offered, prompt=dict(ctx.prompt),
            run_context=dict(ctx.run_context), max_steps=ctx.max_steps, timeout_s=ctx.timeout_s,
            redact=ctx.redact,
        ))


@dataclass(frozen=True)
class ToolLearning:
    """``AgentHarness(autonomous_research_learner=...)``; off without a learner."""

    name: ClassVar[str] = "learner"
    learner: AutonomousResearchLearner | Any | None

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        return None if self.learner is None else ToolLearningHook(self.learner)


class ToolLearningHook(TurnHook):
    name = "learner"
    logger = LOGGER

    def __init__(self, learner: AutonomousResearchLearner | Any) -> None:
        self.learner = learner

    def prepare_tools(self, ctx: TurnContext, offer: ToolOffer) -> ToolOffer:
        boosts = tool_boosts_of(self.learner)  # asked only when selection needs a ranking
        if boosts is not None:
            offer.boosts.append(boosts)
        return offer

    def after_turn(self, ctx: TurnContext, result: TurnResult) -> None:
        self.learner.observe(result)
