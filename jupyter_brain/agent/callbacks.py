"""AgentCallbacks: hooks for UIs and scripts. A failing callback is logged, never fatal."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("jupyter_brain.callbacks")


@dataclass
class AgentCallbacks:
    """Optional hooks. ``on_event`` sees every event; the others are conveniences.

    Subclass and override, or pass callables to the constructor.
    """

    on_stream_chunk: Callable[[str], Any] | None = None  # text delta
    on_tool_start: Callable[[str, Any], Any] | None = None  # (name, arguments)
    on_tool_end: Callable[[Any], Any] | None = None  # ToolCallEnd event
    on_reflection: Callable[[Any], Any] | None = None  # ReflectionResult
    on_step: Callable[[int], Any] | None = None  # step number, at step start
    on_event: Callable[[Any], Any] | None = None  # every Event

    def wants(self, hook: str) -> bool:
        """Whether ``fire(hook, ...)`` may call anything (checked once per stream or turn,
        so a stream with no callbacks does not call ``fire`` per chunk)."""
        return getattr(self, hook, None) is not None or type(self) is not AgentCallbacks

    def fire(self, hook: str, *args: Any) -> None:
        """Call one hook if set; swallow and log its failure so the turn goes on."""
        fn = getattr(self, hook, None)
        if fn is None:
            if type(self) is AgentCallbacks:  # the common case, several times a step: no hook
                return
            # A subclass method is shadowed by the dataclass's None default: find it.
            method = getattr(type(self), hook, None)
            if not callable(method):
                return
            fn = method.__get__(self)
        try:
            fn(*args)
        except Exception:  # a UI bug must never break the agent
            log.exception("callback %s failed", hook)
