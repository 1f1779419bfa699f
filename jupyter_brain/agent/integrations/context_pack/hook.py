"""The turn's context pack: ``top_k`` workspace passages for the user's message.

Retrieved once when the turn starts, rendered as the ``context_pack`` layer of every
request of the turn (never stored in the history), announced with a
``ContextPackEvent`` and kept in the turn's ``Sources`` (``TurnResult.context_pack_json``,
and what the citations read). A failure to index is the dispatcher's recoverable error.
"""

from __future__ import annotations

from typing import ClassVar

from ...context.layers import ContextLayer
from ...events import ContextPackEvent
from ...hooks import TurnContext, TurnHook


class ContextPackIntegration:
    """Active in the turns run with ``top_k`` > 0."""

    name: ClassVar[str] = "context_pack"
    turn_options: ClassVar[tuple[str, ...]] = ("top_k",)  # off: for_turn is not called

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        return ContextPackHook() if ctx.options.top_k > 0 else None


class ContextPackHook(TurnHook):
    name = "context_pack"

    def context_layers(self, ctx: TurnContext) -> list[ContextLayer]:
        """The pack as a layer (none when nothing matched)."""
        # The index's library loads with the first turn that asks for passages, not with every turn (#40).
        from ...context_pack.pack import build_context_pack

        pack = build_context_pack(ctx.working_directory, ctx.user_message, ctx.options.top_k, redact=ctx.redact)
        as_json = ctx.sources.context_pack = pack.as_json()
        ctx.emit(ContextPackEvent(query=pack.query, passages=as_json["passages"]))
        text = pack.render()
        return [ContextLayer.fixed("context_pack", text)] if text else []
