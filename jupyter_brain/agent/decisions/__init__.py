"""Per-turn decision records and learners (see ``base``): the SQLite store beside the
event log, the record builders, and the learner of tool usage."""

from .base import AutonomousResearchLearner, RuntimeDecisionRecord, RuntimeDecisionStore
from .record import compare_best_record, decision_record
from .sqlite import DecisionRecords, SQLiteDecisionStore, default_decision_store
from .tool_learner import ToolUsageLearner, default_tool_learner

__all__ = [
    "AutonomousResearchLearner", "DecisionRecords", "RuntimeDecisionRecord", "RuntimeDecisionStore",
    "SQLiteDecisionStore", "ToolUsageLearner", "compare_best_record", "decision_record",
    "default_decision_store", "default_tool_learner",
]
