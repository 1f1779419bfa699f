"""The harness's calls into decisions and learners, each failure logged and swallowed:
they run after the turn has ended, and an optional integration never breaks a turn."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .record import decision_record

if TYPE_CHECKING:
    from ..harness import AgentHarness
    from ..results import TurnResult
    from ..turn import Turn

_log = logging.getLogger("jupyter_brain.decisions")


def record_and_observe(harness: AgentHarness, turn: Turn, result: TurnResult) -> None:
    """The turn's decision record to ``harness.decision_store``; the finished turn to
    ``harness.autonomous_research_learner``."""
    if harness.decision_store is not None:
        try:
            harness.decision_store.record(decision_record(turn, result, harness))
        except Exception as exc:  # noqa: BLE001 - see the module docstring
            _log.warning("decision store failed to record turn %s: %s", result.turn_id, _clean(harness, exc))
    if harness.autonomous_research_learner is not None:
        try:
            harness.autonomous_research_learner.observe(result)
        except Exception as exc:  # noqa: BLE001 - see the module docstring
            _log.warning("learner failed to observe turn %s: %s", result.turn_id, _clean(harness, exc))


def _clean(harness: AgentHarness, exc: Exception) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return harness.redactor(text) if harness.redactor is not None else text
