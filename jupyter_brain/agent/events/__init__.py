"""Typed events and where they are kept.

``schema`` holds the event models (the contract shared with the front-end, whose
TypeScript types are generated from it); ``store`` holds ``EventLog``, the SQLite store
of events, session histories and records.
"""

from __future__ import annotations

from .schema import (
    EVENT_ADAPTER,
    ApprovalDecision,
    ApprovalRequest,
    CompactionEvent,
    ContextWarning,
    ErrorEvent,
    Event,
    EventBase,
    ReflectionEvent,
    RetryEvent,
    StepEnd,
    StepStart,
    StrategyStepEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingPhaseEvent,
    ToolCallArgs,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolStatus,
    TurnEnd,
    TurnStart,
    TurnStatus,
    UsageEvent,
    event_from_dict,
    event_json_schema,
)
from .store import GROUP_COMMIT_S, EventLog, TurnRecord

__all__ = [
    "EVENT_ADAPTER",
    "GROUP_COMMIT_S",
    "ApprovalDecision",
    "ApprovalRequest",
    "CompactionEvent",
    "ContextWarning",
    "ErrorEvent",
    "Event",
    "EventBase",
    "EventLog",
    "ReflectionEvent",
    "RetryEvent",
    "StepEnd",
    "StepStart",
    "StrategyStepEvent",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingPhaseEvent",
    "ThinkingEnd",
    "ToolCallArgs",
    "ToolCallArgsDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolStatus",
    "TurnEnd",
    "TurnRecord",
    "TurnStart",
    "TurnStatus",
    "UsageEvent",
    "event_from_dict",
    "event_json_schema",
]
