"""The model a keyless local server serves, asked once per base URL per process.

Without a model, an OpenAI-compatible provider pointed at a local server uses the first
model the server lists at ``/v1/models``. Asking on every cell cost a request (and, with a
new client, a connection) before each answer; so the answer is kept per base URL, shared
by every provider built for that URL, and forgotten when it may be wrong: the connection
failed (the server may have restarted with another model) or the server said it does not
serve that model.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_first: dict[str, str] = {}


def remembered(base_url: str | None) -> str | None:
    """The model found earlier for ``base_url``, if any."""
    with _lock:
        return _first.get(base_url or "")


def remember(base_url: str | None, model: str) -> None:
    with _lock:
        _first[base_url or ""] = model


def forget(base_url: str | None) -> None:
    """Ask the server again next time."""
    with _lock:
        _first.pop(base_url or "", None)


def forget_all() -> None:
    """Ask every server again (the tests: a port the OS hands out again is another server)."""
    with _lock:
        _first.clear()
