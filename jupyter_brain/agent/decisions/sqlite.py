"""``SQLiteDecisionStore``: decision records in a table of the event log's database.

The records sit beside the events they summarise, so ``%agent decisions`` and a
DataFrame of them outlive the kernel. Given an ``EventLog`` the store shares its
connection and lock (an in-memory log has no file another connection could open) and
its masking of secrets; given a path it opens its own database (``events.database``).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import weakref
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..events.database import Database
from .base import RuntimeDecisionRecord

if TYPE_CHECKING:
    from ..events import EventLog

_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    created REAL NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS decisions_by_session ON decisions(session_id, id);
"""


class DecisionRecords(list[RuntimeDecisionRecord]):
    """Decision records, oldest first: a list, and a table with ``to_dataframe()``."""

    def to_dataframe(self) -> Any:
        """A ``pandas.DataFrame``, one row per record (``prompt``, ``run_context`` and
        ``detail`` stay dicts; ``created`` is a timestamp)."""
        try:
            pd = import_module("pandas")  # optional: only this method needs it
        except ImportError:
            raise ImportError(
                "DecisionRecords.to_dataframe() needs pandas: pip install pandas "
                "(the records themselves are plain pydantic models: [r.model_dump() for r in records])"
            ) from None
        columns = list(RuntimeDecisionRecord.model_fields)
        frame = pd.DataFrame([r.model_dump() for r in self], columns=columns)
        frame["created"] = pd.to_datetime(frame["created"], unit="s")
        return frame


class SQLiteDecisionStore:
    """A ``RuntimeDecisionStore``: ``record`` appends, ``records``/``latest`` read back."""

    def __init__(self, source: EventLog | str | Path) -> None:
        self._db = Database(source, _SCHEMA)

    def record(self, record: RuntimeDecisionRecord) -> None:
        data = self._db.scrub(record.model_dump_json())
        with self._db.lock:
            self._db.connection.execute(
                "INSERT INTO decisions(session_id, turn_id, kind, created, data) VALUES (?, ?, ?, ?, ?)",
                (record.session_id, record.turn_id, record.kind, record.created, data),
            )

    def records(self, session_id: str | None = None, *, kind: str | None = None,
                limit: int | None = None) -> DecisionRecords:
        """Records oldest first: of one session and/or one kind, the latest ``limit`` only."""
        where, params = [], []
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        if kind is not None:
            where.append("kind = ?")
            params.append(kind)
        sql = "SELECT data FROM decisions" + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY id DESC"
        if limit is not None:
            if limit < 0:
                raise ValueError(f"limit must be zero or more, got {limit}")
            sql += f" LIMIT {int(limit)}"
        with self._db.lock:
            rows = self._db.connection.execute(sql, params).fetchall()
        return DecisionRecords(RuntimeDecisionRecord.model_validate(json.loads(r[0])) for r in reversed(rows))

    def latest(self, n: int = 20, *, session_id: str | None = None, kind: str | None = None) -> DecisionRecords:
        """The last ``n`` records (oldest of them first)."""
        return self.records(session_id, kind=kind, limit=n)

    def to_dataframe(self, session_id: str | None = None, *, kind: str | None = None) -> Any:
        return self.records(session_id, kind=kind).to_dataframe()


_DEFAULT: weakref.WeakKeyDictionary[Any, SQLiteDecisionStore] = weakref.WeakKeyDictionary()
_DEFAULT_LOCK = threading.Lock()


def default_decision_store(event_log: EventLog) -> SQLiteDecisionStore | None:
    """The one store on ``event_log`` (its table is created once, not per cell); None,
    with a warning, when the database cannot hold it (turns then go unrecorded)."""
    with _DEFAULT_LOCK:
        store = _DEFAULT.get(event_log)
        if store is None:
            try:
                store = _DEFAULT[event_log] = SQLiteDecisionStore(event_log)
            except sqlite3.Error as exc:
                logging.getLogger("jupyter_brain.decisions").warning("no decision store: %s", exc)
        return store
