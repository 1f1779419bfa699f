"""The kernel's web search function, registered with ``@jupyter_brain.web_search``.

``%%agent --web on`` offers it as the ``web_search(query)`` tool when the provider has no
search of its own. One function per kernel (the last registered wins); a plain module
slot, so registering needs neither the magics nor the agent core loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_REGISTERED: list[Callable[[str], Any]] = []


def register_web_search(fn: Callable[[str], Any] | None) -> None:
    """Make ``fn`` (``query -> results``) the kernel's search; None removes it."""
    if fn is not None and not callable(fn):
        raise TypeError(f"a web search function takes a query and returns results; got {type(fn).__name__}")
    _REGISTERED[:] = [fn] if fn is not None else []


def registered_web_search() -> Callable[[str], Any] | None:
    return _REGISTERED[0] if _REGISTERED else None
