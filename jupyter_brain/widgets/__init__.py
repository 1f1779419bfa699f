"""Views of an agent turn: the live ``AgentView`` widget and the plain-text ``TextView``.

Imports are lazy so the text view and the schema script work without anywidget (a
terminal, or the isolated build env that generates the front-end's types).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent_view import AgentView, BundleMissingError
    from .compare_view import CompareView
    from .text_view import TextView, events_to_markdown

__all__ = ["AgentView", "BundleMissingError", "CompareView", "TextView", "events_to_markdown"]

_HOMES = {
    "AgentView": "agent_view",
    "BundleMissingError": "agent_view",
    "CompareView": "compare_view",
    "TextView": "text_view",
    "events_to_markdown": "text_view",
}


def __getattr__(name: str) -> Any:
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)
