""""Turn N" in a view's header is the turn's number in its session, not in the view.

A view is made per cell, so counting the turns it saw would say "Turn 1" every time. The
number is the turn's place in the session's event log (1 = first, replaced turns counted),
the number ``%agent replay N``, ``%agent inspect N`` and ``%agent cost`` use: the view gets
it in the ``TurnStart`` it folds (``turn_number``; the logged event keeps 0).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def numbered(handle: Callable[[Any], Any], number: int) -> Callable[[Any], Any]:
    """``handle`` (a view's), with ``number`` put into the turn's ``TurnStart``."""

    def on_event(event: Any) -> Any:
        if getattr(event, "type", None) == "turn_start":
            return handle(event.model_copy(update={"turn_number": number}))
        return handle(event)

    return on_event


def numbered_events(events: Iterable[Any], number: int) -> list[Any]:
    """A logged turn's events with its number, for ``%agent replay``."""
    return [e.model_copy(update={"turn_number": number}) if getattr(e, "type", None) == "turn_start" else e
            for e in events]
