"""The SQLite databases the agent keeps: how one is opened, and tables kept beside the log.

Every file is opened the same way: shared between threads (each use under one lock),
autocommit unless a transaction is begun, WAL journaling (another kernel on the same
folder reads while this one writes) with ``synchronous=NORMAL`` (no fsync per commit),
and a wait of up to ``BUSY_TIMEOUT_S`` for a write lock another process holds.
``Database`` serves tables kept beside the event log (decisions, learned tool use): the
log's own connection, lock and masking when given the log, or a file of their own.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol

BUSY_TIMEOUT_S = 10.0


class SharedLog(Protocol):
    """An event log whose connection a table beside it shares (``EventLog``; the log opens
    its file with ``connect`` from here, so this module names only what it uses of it)."""

    def shared_connection(self) -> tuple[sqlite3.Connection, Any]: ...

    def scrub(self, text: str) -> str: ...


def connect(path: str | Path) -> sqlite3.Connection:
    """Open (creating its folder) the database at ``path``, or ``":memory:"``."""
    path = str(path)
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    if path != ":memory:":
        db.execute("PRAGMA synchronous=NORMAL")  # first: a new file then switches to WAL with fewer syncs
        db.execute("PRAGMA journal_mode=WAL")
    return db


class Database:
    """A SQLite connection, the lock that guards it and the masking applied to what is
    written: the event log's own when there is one (its writer thread uses both)."""

    def __init__(self, source: SharedLog | str | Path, schema: str) -> None:
        if isinstance(source, (str, Path)):
            self.connection = connect(source)
            self.lock: Any = threading.Lock()
            self._event_log: SharedLog | None = None
        else:
            self.connection, self.lock = source.shared_connection()
            self._event_log = source
        with self.lock:
            self.connection.executescript(schema)

    def scrub(self, text: str) -> str:
        # The log's masking is set once a harness redacts its logs.
        return self._event_log.scrub(text) if self._event_log is not None else text
