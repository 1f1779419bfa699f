"""The tools of one turn: selected at its start, deferred ones loaded as it goes (#26)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..context.fitting import split_tools
from ..harness_settings import HarnessSettings
from ..hooks import ToolOffer
from ..tool_deferral import DeferredTools
from ..tools import AgentToolRegistry, ToolSpec

Schema = dict[str, Any]


@dataclass
class TurnTools:
    """``schemas``: what the next request offers; ``specs``: the turn's own tools (the
    hooks', ``find_tools``) that run beside the registry's; ``deferred``: the rest."""

    schemas: list[Schema]
    specs: list[ToolSpec]
    deferred: DeferredTools | None

    def refresh(self, messages: list[dict[str, Any]]) -> list[Schema] | None:
        """A new offer when the turn loaded deferred tools since the last request (a new
        list: the requests already made keep theirs), else None."""
        if self.deferred is None:
            return None
        self.deferred.note_messages(messages)
        loaded = self.deferred.take_loaded()
        if not loaded:
            return None
        self.schemas = [*self.schemas, *loaded]
        return self.schemas


def turn_tools(settings: HarnessSettings, registry: AgentToolRegistry, offer: ToolOffer,
               history: list[dict[str, Any]], user_message: str) -> TurnTools:
    """The registry's tools the turn offers (all, or with semantic selection the most
    relevant plus those marked ``always_offered``; the rest deferred behind ``find_tools``),
    then the turn's own tools, then the provider-run ones."""
    always, keywords = registry.selection_hints()
    offered, deferred = split_tools(
        registry.schemas(), history, user_message, semantic=settings.enable_semantic_selection,
        max_tools=settings.max_tools_per_turn, tool_boosts=offer.boosts, blocked=offer.blocked,
        always=always, keywords=keywords)
    deferral = DeferredTools(deferred) if deferred else None
    specs = [*offer.tools, *([deferral.spec()] if deferral else [])]
    return TurnTools([*offered, *(spec.schema() for spec in specs), *offer.schemas], specs, deferral)
