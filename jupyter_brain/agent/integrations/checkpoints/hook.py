"""Tells the checkpoint store which turn is running, so that undo works per turn.

The write tools snapshot a file before they write it (``agent/checkpoints``); the store
files each snapshot under the turn this hook began when the turn started.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...hooks import TurnContext, TurnHook


@dataclass(frozen=True)
class CheckpointsIntegration:
    """``AgentHarness(checkpoint_store=...)``; off without a store."""

    name: ClassVar[str] = "checkpoints"
    store: Any  # a CheckpointStore (anything with begin_turn(session_id, turn_id))

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        return None if self.store is None else CheckpointsHook(self.store)


class CheckpointsHook(TurnHook):
    name = "checkpoints"

    def __init__(self, store: Any) -> None:
        self.store = store

    def turn_start(self, ctx: TurnContext) -> None:
        self.store.begin_turn(ctx.session_id, ctx.turn_id)
