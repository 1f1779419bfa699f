"""A cell's turn, not a chat message: running a cell again replaces its earlier turn.

A session's history is a list of messages; ``CellHistory`` keeps, beside it, the turn
each message belongs to (the event log's ``messages.turn_id``), and a table beside the
log, ``cell_turns``, keeps the cell each turn ran from and which turn replaced it. Before
a cell's turn, the cell's earlier turns leave the history (``--append`` keeps them), and
the new turn **takes the earlier turn's place**: it is sent the turns before that place
only, and the turns after it stay after it. So re-running cell 2 of 5 sends what cell
2 first saw (an unchanged cell replays), and the history keeps the notebook's order.
With ``--append``, when the earlier turn cannot be taken out, or when the cell is known
only by its text (no front-end cell id: two cells with one text are one cell then, and
the later one means "ask again, after what came between"), the new turn is added at the end. The event log keeps every turn and every event: a replaced turn only leaves the
history (``%agent log`` marks it).

A turn that compaction already folded into a summary cannot be taken out again; it
stays in the summary. A removal that would leave an invalid history is not made.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .agent.events.database import Database
from .agent.history import history_problems

Message = dict[str, Any]

SCHEMA = """
CREATE TABLE IF NOT EXISTS cell_turns (
    turn_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    cell TEXT NOT NULL,
    execution TEXT,
    appended INTEGER NOT NULL DEFAULT 0,
    replaced_by TEXT
);
CREATE INDEX IF NOT EXISTS cell_turns_by_cell ON cell_turns(session_id, cell);
"""


@dataclass(frozen=True)
class CellRun:
    """One execution of a cell: ``key`` names the cell, ``execution`` this run of it."""

    key: str  # "id:<cellId>" or "src:<hash of the cell's text>"
    execution: str | None = None  # the execute request's msg_id, when a kernel sent one

    @property
    def from_frontend(self) -> bool:
        """The front-end named the cell (JupyterLab, Notebook 7), rather than its text."""
        return self.key.startswith("id:")


class CellTurnTable:
    """The ``cell_turns`` table in the event log's database: a turn's cell, and its successor."""

    def __init__(self, event_log: Any) -> None:
        self.event_log = event_log
        self.db = Database(event_log, SCHEMA)

    def earlier_turns(self, session_id: str, run: CellRun) -> list[str]:
        """The cell's turns still in the history, except those of this very execution."""
        with self.db.lock:
            rows = self.db.connection.execute(
                "SELECT turn_id, execution FROM cell_turns WHERE session_id = ? AND cell = ?"
                " AND replaced_by IS NULL ORDER BY rowid", (session_id, run.key)).fetchall()
        return [turn for turn, execution in rows if run.execution is None or execution != run.execution]

    def add(self, session_id: str, turn_id: str, run: CellRun, *, appended: bool,
            replaces: Sequence[str]) -> None:
        with self.db.lock:
            db = self.db.connection
            db.execute("BEGIN")
            try:
                db.execute("INSERT OR REPLACE INTO cell_turns(turn_id, session_id, cell, execution, appended)"
                           " VALUES (?, ?, ?, ?, ?)", (turn_id, session_id, run.key, run.execution, int(appended)))
                db.executemany("UPDATE cell_turns SET replaced_by = ? WHERE turn_id = ?",
                               [(turn_id, old) for old in replaces])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def replaced(self, session_id: str) -> dict[str, str]:
        """Replaced turn id -> the turn that replaced it, for a session."""
        with self.db.lock:
            rows = self.db.connection.execute(
                "SELECT turn_id, replaced_by FROM cell_turns WHERE session_id = ? AND replaced_by IS NOT NULL",
                (session_id,)).fetchall()
        return dict(rows)

    def message_turns(self, session_id: str) -> list[str]:
        """The turn of each stored history message, in order ("" where a rewrite lost it)."""
        self.event_log.flush()
        with self.db.lock:
            rows = self.db.connection.execute(
                "SELECT turn_id FROM messages WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
        return [r[0] for r in rows]

    def drop_messages(self, session_id: str, turn_ids: Iterable[str]) -> None:
        """Take replaced turns out of the stored history (their events stay)."""
        ids = [t for t in turn_ids if t]
        if not ids:
            return
        self.event_log.flush()
        with self.db.lock:
            self.db.connection.executemany(
                "DELETE FROM messages WHERE session_id = ? AND turn_id = ?", [(session_id, t) for t in ids])

    def retag(self, session_id: str, tags: Sequence[str]) -> None:
        """After a rewrite (compaction) stored the history with no turns: give its rows theirs back."""
        self.event_log.flush()
        with self.db.lock:
            db = self.db.connection
            rows = db.execute("SELECT id, turn_id FROM messages WHERE session_id = ? ORDER BY id",
                              (session_id,)).fetchall()
            if len(rows) != len(tags):
                return  # the stored history is not the one in memory: leave it as it is
            db.executemany("UPDATE messages SET turn_id = ? WHERE id = ?",
                           [(tag, row_id) for (row_id, old), tag in zip(rows, tags, strict=True) if tag and tag != old])


class CellHistory:
    """A session's history with the turn of each message; takes a cell's earlier turn out."""

    def __init__(self, event_log: Any, session_id: str, history: Sequence[Message]) -> None:
        self.session_id = session_id
        self.table = CellTurnTable(event_log)
        stored = self.table.message_turns(session_id) if history else []
        self.tags: list[str] = stored if len(stored) == len(history) else [""] * len(history)
        self._sent: tuple[list[Message], list[str]] | None = None
        self._after: tuple[list[Message], list[str]] = ([], [])  # the turns after the replaced one
        self._replaced: list[str] = []  # the cell's earlier turns, replaced by the running one
        self._removed: list[str] = []  # those of them taken out of the history

    def before_turn(self, history: list[Message], run: CellRun | None, *, append: bool = False) -> list[Message]:
        """The history to send for a turn of ``run``'s cell: without the cell's earlier
        turns, unless ``append`` (or the turn has no cell); for a cell the front-end names,
        also without the turns after the earlier turn's place (``after_turn`` puts them back
        after the new turn)."""
        if len(self.tags) != len(history):  # the history was set from outside: turns unknown
            self.tags = [""] * len(history)
        sent, tags, replaced, removed = list(history), list(self.tags), [], []
        place = len(sent)
        if run is not None and not append:
            for turn_id in self.table.earlier_turns(self.session_id, run):
                kept = _without_turn(sent, tags, turn_id)
                if kept is not None:
                    place = min(place, tags.index(turn_id))
                    sent, tags = kept
                    removed.append(turn_id)
                replaced.append(turn_id)
        if run is None or not run.from_frontend or (place < len(sent) and sent[place].get("role") != "user"):
            # At the end: a cell known only by its text may be another cell with the same
            # text further down (asked again after the user said more), not this one re-run.
            place = len(sent)
        self._after = (sent[place:], tags[place:])
        sent, tags = sent[:place], tags[:place]
        self._sent, self._replaced, self._removed = (sent, tags), replaced, removed
        return sent

    def after_turn(self, result: Any, run: CellRun | None, *, append: bool = False) -> list[Message]:
        """The turn ended: its messages get its id, the cell's earlier turns are marked
        replaced. Returns the session's history: the turn's, then the turns after its place."""
        sent, tags = self._sent if self._sent is not None else ([], [])
        after, after_tags = self._after
        messages, new = result.messages, result.new_messages
        prefix = messages[: len(messages) - len(new)]
        rewritten = len(prefix) != len(sent) or any(a is not b for a, b in zip(prefix, sent, strict=False))
        before = _tags_after_rewrite(prefix, sent, tags) if rewritten else tags
        history = list(messages) + after
        self.tags = before + [result.turn_id] * len(new) + after_tags
        if after:  # the stored history rewritten in this order (the replaced turns left out)
            self.table.event_log.replace_history(self.session_id, history, turn_ids=self.tags)
        else:
            if self._removed:
                self.table.drop_messages(self.session_id, self._removed)
            if rewritten:
                self.table.retag(self.session_id, self.tags)
        if run is not None:
            self.table.add(self.session_id, result.turn_id, run, appended=append, replaces=self._replaced)
        self._sent, self._after, self._replaced, self._removed = None, ([], []), [], []
        return history

    def reset(self) -> None:
        self.tags = []


def _without_turn(history: list[Message], tags: list[str], turn_id: str) -> tuple[list[Message], list[str]] | None:
    """``history`` without the messages of ``turn_id`` — when they are one whole turn (from
    its user message on) and the rest stays valid; None otherwise (compacted, or absent)."""
    where = [i for i, t in enumerate(tags) if t == turn_id]
    if not where or where != list(range(where[0], where[-1] + 1)) or history[where[0]].get("role") != "user":
        return None
    start, end = where[0], where[-1] + 1
    kept = history[:start] + history[end:]
    if history_problems(kept) and not history_problems(history):
        return None
    return kept, tags[:start] + tags[end:]


def _tags_after_rewrite(prefix: Sequence[Message], sent: Sequence[Message], tags: Sequence[str]) -> list[str]:
    """The turns of a history a compaction rewrote: messages it kept keep theirs."""
    by_id = {id(m): t for m, t in zip(sent, tags, strict=False)}
    by_json: dict[str, str] = {}
    out: list[str] = []
    for m in prefix:
        tag = by_id.get(id(m))
        if tag is None:
            if not by_json:
                by_json = {_key(s): t for s, t in zip(sent, tags, strict=False)}
            tag = by_json.get(_key(m), "")
        out.append(tag)
    return out


def _key(message: Message) -> str:
    return json.dumps(message, sort_keys=True, default=str)
