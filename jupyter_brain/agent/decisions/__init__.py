"""Per-turn decision records and learners (see ``base``)."""

from .base import AutonomousResearchLearner, RuntimeDecisionRecord, RuntimeDecisionStore

__all__ = ["AutonomousResearchLearner", "RuntimeDecisionRecord", "RuntimeDecisionStore"]
