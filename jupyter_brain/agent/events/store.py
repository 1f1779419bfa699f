"""The SQLite store behind the event stream: every event, each session's history, records.

Writes go through a writer thread in batched transactions, so the agent loop never waits
for the disk between steps; reads wait for the writer, so they see every append before.
"""

from __future__ import annotations

import atexit
import json
import logging
import queue
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from .database import connect
from .rows import MESSAGE_JSON, event_json, insert_rows
from .schema import EVENT_ADAPTER, Event, EventBase, TurnEnd, TurnStart

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    turn_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    started REAL NOT NULL,
    ended REAL,
    status TEXT,
    user_message TEXT NOT NULL,
    text TEXT
);
CREATE INDEX IF NOT EXISTS turns_by_session ON turns(session_id, idx);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_turn ON events(turn_id, seq);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages(session_id, id);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    session_id TEXT,
    ts REAL NOT NULL,
    data TEXT NOT NULL
);
"""


_MERGEABLE = ("text_delta", "thinking_delta")
_SPECIAL = frozenset({*_MERGEABLE, "turn_start", "step_end", "turn_end"})
GROUP_COMMIT_S = 0.02  # step ends closer together than this share one transaction


class TurnRecord(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validators built on first use, not at import (#40)

    turn_id: str
    session_id: str
    index: int
    started: float
    ended: float | None = None
    status: str | None = None
    user_message: str
    text: str | None = None


class EventLog:
    """Append-only SQLite log of every event, plus each session's message history.

    Writes are buffered and handed to a writer thread that commits each batch in one
    transaction, at step ends (grouped when they come faster than ``GROUP_COMMIT_S``),
    at turn ends and when the buffer fills: the agent loop does not wait for the disk
    between steps, a crash loses at most the step in flight (plus ``GROUP_COMMIT_S``),
    and a turn's end waits until the whole turn is committed.
    Every read (and ``flush()``) first waits for the writer, so readers see all that
    was appended before. ``":memory:"`` keeps everything in RAM (tests).
    """

    def __init__(
        self,
        path: str | Any = ":memory:",
        *,
        flush_every: int = 512,
        redact: Any = None,
    ) -> None:
        self.path = str(path)
        self._db = connect(self.path)
        self._db.executescript(_SCHEMA)
        self._lock = threading.RLock()  # the pending buffers
        self._db_lock = threading.Lock()  # the connection (writer thread and readers)
        self._queue: queue.Queue[tuple | None] = queue.Queue()
        self.last_error: BaseException | None = None
        self._last_handoff = 0.0
        self._boundary_pending = False  # a step ended since the last hand-over
        self._closed = False
        self._writer = threading.Thread(target=self._write_loop, name="jupyter-brain-eventlog", daemon=True)
        self._writer.start()
        atexit.register(_close_at_exit, weakref.ref(self))
        self._pending_events: list[tuple] = []
        self._pending_turns: list[tuple] = []
        self._turn_updates: list[tuple] = []
        self._pending_messages: list[tuple[str, str, str]] = []  # (session, turn, JSON)
        self._flush_every = flush_every
        self._redact = redact  # callable str -> str, applied to everything written

    # writing ---------------------------------------------------------------
    def append(self, event: EventBase) -> None:
        """Buffer one event. It is serialised now, on the caller's thread (a snapshot of the
        event as emitted): the writer thread then holds the GIL only briefly, which is what
        the agent loop would otherwise wait for. Deltas stay objects until they are merged."""
        etype = getattr(event, "type", "")
        if etype in _MERGEABLE:
            self._append_special(event, etype, None)
            return
        try:
            row = (event.session_id, event.turn_id, event.seq, etype, event_json(event))
        except Exception as exc:
            self.last_error = exc  # e.g. a value JSON cannot hold: this event is not stored
            raise
        if etype not in _SPECIAL:  # most events: only buffered
            with self._lock:
                pending = self._pending_events
                pending.append(row)
                if len(pending) >= self._flush_every:
                    self._handoff()
            return
        self._append_special(event, etype, row)

    def _append_special(self, event: EventBase, etype: str, row: tuple | None) -> None:
        """Deltas (merged), and the events that start or end a turn or a step."""
        last: tuple | None = None  # a turn's last batch, when this thread writes it itself
        with self._lock:
            if etype in _MERGEABLE and self._pending_events:
                # Consecutive deltas of one step are stored as one row: replay renders the
                # same text, and a 2,000-token answer costs one row instead of 2,000.
                prev = self._pending_events[-1]
                if prev[3] == etype and prev[1] == event.turn_id and prev[5] == event.step:  # type: ignore[attr-defined]
                    merged = prev[6] + event.text  # type: ignore[attr-defined]
                    self._pending_events[-1] = prev[:6] + (merged,)
                    return
            if isinstance(event, TurnStart):
                self._pending_turns.append(
                    (event.turn_id, event.session_id, event.ts, self._scrub(event.user_message))
                )
            if row is None:  # a delta: serialised by the writer, once no more text can join it
                self._pending_events.append(
                    (event.session_id, event.turn_id, event.seq, etype, event, event.step, event.text)  # type: ignore[attr-defined]
                )
            else:
                self._pending_events.append(row)
            if isinstance(event, TurnEnd):
                self._turn_updates.append(
                    (event.ts, event.status, self._scrub(event.text), event.turn_id)
                )
            if etype == "step_end":
                # Group commit: at most one hand-over per GROUP_COMMIT_S; the writer picks
                # up a step end that came sooner within that interval, so nothing waits long.
                if time.monotonic() - self._last_handoff >= GROUP_COMMIT_S:
                    self._handoff()
                else:
                    self._boundary_pending = True
            elif etype == "turn_end":
                # Nothing queued and the database free: write the last batch on this thread
                # (taking the database before letting go of the buffer keeps the order of
                # writes), which saves waking the writer and waiting to be woken in turn.
                if self._queue.unfinished_tasks == 0 and self._db_lock.acquire(blocking=False):
                    last = self._detach()
                    if last is None:
                        self._db_lock.release()
                else:
                    self._handoff()
            elif len(self._pending_events) >= self._flush_every:
                self._handoff()
        if last is not None:
            self._write_here(last)
        elif etype == "turn_end":
            # Once per turn, wait: a finished turn is on disk for any other reader.
            self._queue.join()

    def _write_here(self, batch: tuple) -> None:
        """Commit ``batch`` on the calling thread, which holds ``_db_lock``; errors as in the
        writer thread. Interrupted (Ctrl-C), the batch goes to the writer thread instead."""
        try:
            self._write(*batch)
        except Exception as exc:  # noqa: BLE001 - a full disk must not kill the kernel
            self.last_error = exc
            logging.getLogger("jupyter_brain.events").error("event log write failed: %s", exc)
        except BaseException:
            self._queue.put(batch)  # rolled back: the writer commits it
            raise
        finally:
            self._db_lock.release()

    def _row(self, pending: tuple) -> tuple[str, str, int, str, str]:
        session_id, turn_id, seq, etype, event = pending[:5]
        text = pending[6] if etype in _MERGEABLE and pending[6] != event.text else None
        return session_id, turn_id, seq, etype, self._scrub(event_json(event, text))

    def _event_values(self, pending: list[tuple]) -> list[Any]:
        """The rows of ``pending`` events (serialised already, or deltas), flattened for
        ``insert_rows``."""
        values: list[Any] = []
        redact = self._redact
        for p in pending:
            if len(p) != 5:
                values += self._row(p)
            elif redact is None:
                values += p
            else:
                values += (p[0], p[1], p[2], p[3], redact(p[4]))
        return values

    def _scrub(self, text: str) -> str:
        return self._redact(text) if self._redact is not None else text

    def scrub(self, text: str) -> str:
        """``text`` masked as the log masks what it writes (for tables kept beside it)."""
        return self._scrub(text)

    def shared_connection(self) -> tuple[Any, threading.Lock]:
        """(connection, lock) for tables kept beside the log (decisions, learned tool use);
        hold the lock for every use: the writer thread holds it while it commits."""
        return self._db, self._db_lock

    def _handoff(self) -> None:
        """Give the pending rows to the writer thread (caller holds ``_lock``)."""
        batch = self._detach()
        if batch is not None:
            self._queue.put(batch)

    def _detach(self) -> tuple | None:
        """Take the pending rows as one batch, None when there are none (caller holds ``_lock``)."""
        self._boundary_pending = False
        self._last_handoff = time.monotonic()
        if not (self._pending_events or self._pending_turns or self._turn_updates
                or self._pending_messages):
            return None
        batch = (self._pending_turns, self._pending_events, self._turn_updates, self._pending_messages)
        self._pending_turns, self._pending_events = [], []
        self._turn_updates, self._pending_messages = [], []
        return batch

    def sync(self) -> None:
        """Wait until the writer has committed every batch handed to it so far.

        Unlike ``flush`` this does not hand over rows still buffered mid-step.
        """
        self._queue.join()

    def flush(self) -> None:
        """Hand over what is pending and wait until the writer has committed it."""
        with self._lock:
            self._handoff()
        self._queue.join()

    def _write_loop(self) -> None:
        while True:
            try:
                batch = self._queue.get(timeout=GROUP_COMMIT_S)
            except queue.Empty:
                if self._boundary_pending:
                    with self._lock:
                        if self._boundary_pending:
                            self._handoff()
                continue
            try:
                if batch is None:
                    return
                with self._db_lock:
                    self._write(*batch)
            except Exception as exc:  # noqa: BLE001 - a full disk must not kill the kernel
                self.last_error = exc
                logging.getLogger("jupyter_brain.events").error("event log write failed: %s", exc)
            finally:
                self._queue.task_done()

    def _write(self, turns: list, events: list, updates: list, messages: list) -> None:
        db = self._db
        db.execute("BEGIN")
        try:
            for turn_id, session_id, started, user_message in turns:
                (idx,) = db.execute(
                    "SELECT COUNT(*) FROM turns WHERE session_id = ?", (session_id,)
                ).fetchone()
                db.execute(
                    "INSERT OR IGNORE INTO turns(turn_id, session_id, idx, started, user_message)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (turn_id, session_id, idx, started, user_message),
                )
            if events:
                insert_rows(db, "events(session_id, turn_id, seq, type, data)", 5, self._event_values(events))
            if updates:
                db.executemany("UPDATE turns SET ended = ?, status = ?, text = ? WHERE turn_id = ?", updates)
            if messages:
                values: list[Any] = []
                redact = self._redact
                for sid, tid, data in messages:
                    values += (sid, tid, data if redact is None else redact(data))
                insert_rows(db, "messages(session_id, turn_id, data)", 3, values)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def append_messages(self, session_id: str, turn_id: str, messages: list[dict[str, Any]]) -> None:
        """Persist messages added to a session's history (so a new kernel can resume it).

        They are committed with the next step or turn boundary, in the same transaction
        as that step's events, so the log and the history never disagree after a crash.
        Like events, they are serialised now, on the caller's thread.
        """
        encode = MESSAGE_JSON.encode
        rows = []
        for m in messages:
            try:
                rows.append((session_id, turn_id, encode(m)))
            except Exception as exc:  # noqa: BLE001 - e.g. a circular message: not stored, the turn goes on
                self.last_error = exc
                logging.getLogger("jupyter_brain.events").error("event log write failed: %s", exc)
        with self._lock:
            self._pending_messages.extend(rows)

    def replace_history(self, session_id: str, messages: list[dict[str, Any]],
                        turn_ids: Sequence[str] | None = None) -> None:
        """Store a rewritten history (reset, compaction, a re-run turn put back in its
        place) in one transaction; ``turn_ids``: the turn of each message, where known."""
        turns = list(turn_ids) if turn_ids is not None and len(turn_ids) == len(messages) else [""] * len(messages)
        rows = [(session_id, turn, self._scrub(MESSAGE_JSON.encode(m))) for m, turn in zip(messages, turns, strict=True)]
        self.flush()
        with self._db_lock:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            self._db.executemany(
                "INSERT INTO messages(session_id, turn_id, data) VALUES (?, ?, ?)", rows
            )
            self._db.execute("COMMIT")

    def add_record(self, kind: str, data: dict[str, Any], session_id: str | None = None) -> None:
        """Free-form durable records (decisions, comparisons) beside the event stream."""
        with self._db_lock:
            self._db.execute(
                "INSERT INTO records(kind, session_id, ts, data) VALUES (?, ?, ?, ?)",
                (kind, session_id, time.time(), self._scrub(json.dumps(data, default=str))),
            )

    # reading ---------------------------------------------------------------
    def sessions(self) -> list[str]:
        self.flush()
        with self._db_lock:
            rows = self._db.execute(
                "SELECT session_id, MAX(started) AS last FROM turns GROUP BY session_id"
                " UNION SELECT session_id, 0 FROM messages WHERE session_id NOT IN"
                " (SELECT session_id FROM turns) GROUP BY session_id ORDER BY last"
            ).fetchall()
        return [r[0] for r in rows]

    def turns(self, session_id: str) -> list[TurnRecord]:
        self.flush()
        with self._db_lock:
            rows = self._db.execute(
                "SELECT turn_id, session_id, idx, started, ended, status, user_message, text"
                " FROM turns WHERE session_id = ? ORDER BY idx",
                (session_id,),
            ).fetchall()
        return [
            TurnRecord(
                turn_id=r[0], session_id=r[1], index=r[2], started=r[3], ended=r[4],
                status=r[5], user_message=r[6], text=r[7],
            )
            for r in rows
        ]

    def events(self, *, turn_id: str | None = None, session_id: str | None = None) -> list[Event]:
        """Events in the order they happened, for one turn or a whole session."""
        self.flush()
        with self._db_lock:
            if turn_id is not None:
                rows = self._db.execute(
                    "SELECT data FROM events WHERE turn_id = ? ORDER BY id", (turn_id,)
                ).fetchall()
            elif session_id is not None:
                rows = self._db.execute(
                    "SELECT data FROM events WHERE session_id = ? ORDER BY id", (session_id,)
                ).fetchall()
            else:
                rows = self._db.execute("SELECT data FROM events ORDER BY id").fetchall()
        return [EVENT_ADAPTER.validate_json(r[0]) for r in rows]

    def load_history(self, session_id: str) -> list[dict[str, Any]]:
        self.flush()
        with self._db_lock:
            rows = self._db.execute(
                "SELECT data FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def records(self, kind: str) -> list[dict[str, Any]]:
        with self._db_lock:
            rows = self._db.execute(
                "SELECT session_id, ts, data FROM records WHERE kind = ? ORDER BY id", (kind,)
            ).fetchall()
        return [{"session_id": r[0], "ts": r[1], **json.loads(r[2])} for r in rows]

    def close(self) -> None:
        """Commit everything, stop the writer and close the database (idempotent)."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        self._queue.put(None)
        self._writer.join(10)
        with self._db_lock:
            self._db.close()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close_at_exit(ref: weakref.ref[EventLog]) -> None:
    """Commit what a still-open log holds when the interpreter exits (the writer is a daemon)."""
    log = ref()
    if log is not None:
        try:
            log.close()
        except Exception:  # noqa: BLE001 - nothing useful to do at exit
            pass
