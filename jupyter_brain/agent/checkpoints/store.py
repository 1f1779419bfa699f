"""The checkpoint store: previous file contents per session and turn, in SQLite.

Storage (under ``root_dir``, by default ``<data_dir>/checkpoints/``):

``checkpoints.sqlite`` (WAL) holds the index *and* the previous contents, as BLOBs
addressed by their SHA-256 (one copy per distinct content, however often it is
snapshotted). Why BLOBs in SQLite rather than loose files: a snapshot is one
transaction, so a crash can never leave an index row pointing at a missing blob or a
blob nobody references; the write tools cap files at a few MB, where SQLite reads and
writes BLOBs as fast as the file system; and the whole store is one file to copy,
inspect or delete.

Which turn a snapshot belongs to: ``begin_turn(session_id, turn_id)`` (called by the
harness at turn start) makes it the store's current turn and the store the process's
*active* store (``active_store()``), which write tools built without an explicit store
use. Writes made before any ``begin_turn`` go to an implicit ``manual-…`` turn of the
session ``"default"``. Thread-safe (one lock around one connection); several processes
may share the folder (WAL, busy timeout), and a new ``CheckpointStore`` on the same
folder — after a kernel restart — sees everything.
"""

from __future__ import annotations

import builtins
import sqlite3
import stat
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from .files import absolute_path, content_hash, existing_ancestor
from .undo import UndoReport, undo_last_turn

DEFAULT_SESSION = "default"
MAX_SNAPSHOT_BYTES = 50_000_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS blobs (
    sha TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    started REAL NOT NULL,
    undone REAL,
    UNIQUE (session_id, turn_id)
);
CREATE TABLE IF NOT EXISTS checkpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    path TEXT NOT NULL,
    existed INTEGER NOT NULL,
    sha TEXT REFERENCES blobs (sha),
    size INTEGER,
    mode INTEGER,
    base_dir TEXT,
    created REAL NOT NULL,
    written INTEGER NOT NULL DEFAULT 0,
    after_exists INTEGER,
    after_sha TEXT,
    after_size INTEGER,
    UNIQUE (session_id, turn_id, path)
);
CREATE INDEX IF NOT EXISTS checkpoints_by_session ON checkpoints (session_id, id);
"""


@dataclass(frozen=True)
class Checkpoint:
    """One file as it was before the first write of a turn."""

    id: int
    session_id: str
    turn_id: str
    path: str  # absolute, symlink-free
    existed: bool
    sha: str | None  # SHA-256 of the previous content (None when the file did not exist)
    size: int | None  # previous size in bytes
    mode: int | None  # previous permission bits
    created: float  # time.time() of the snapshot
    written: bool = False  # the write after the snapshot completed
    after_sha: str | None = None  # what the agent wrote last (None: nothing, or deleted)
    after_size: int | None = None
    undone: bool = False
    base_dir: str | None = None  # nearest folder that existed; undo of a creation prunes up to it

    @property
    def action(self) -> str:
        """``created`` when the turn made the file, ``modified`` when it changed one."""
        return "modified" if self.existed else "created"

    @property
    def when(self) -> str:
        return datetime.fromtimestamp(self.created).strftime("%Y-%m-%d %H:%M:%S")


_ACTIVE: CheckpointStore | None = None
_ACTIVE_LOCK = threading.Lock()


def active_store() -> CheckpointStore | None:
    """The store of the most recently begun turn in this process (None before any)."""
    return _ACTIVE


class CheckpointStore:
    """Previous file contents per session and turn, in ``root_dir/checkpoints.sqlite``."""

    def __init__(self, root_dir: str | Path, *, max_snapshot_bytes: int = MAX_SNAPSHOT_BYTES) -> None:
        self.root_dir = Path(root_dir).expanduser().resolve()
        self.root_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.root_dir / "checkpoints.sqlite"
        self.max_snapshot_bytes = max_snapshot_bytes
        self._lock = threading.RLock()
        # Opened on first use: most turns write no file, and creating the database costs a
        # first turn ~20 ms (issue #24's headless first turn). A begun turn waits for it.
        self._connection: sqlite3.Connection | None = None
        self._begun: tuple[str, str, float] | None = None
        self._current: tuple[str, str] | None = None

    @property
    def _db(self) -> sqlite3.Connection:
        """The database, opened (and created) on first use, with the begun turn's row."""
        with self._lock:
            if self._connection is None:
                db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
                db.execute("PRAGMA synchronous=NORMAL")  # before WAL: switching a new file syncs less
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA busy_timeout=30000")
                db.executescript(_SCHEMA)
                self._connection = db
                if self._begun is not None:
                    self._insert_turn(*self._begun)
            return self._connection

    @property
    def opened(self) -> bool:
        """Whether the database has been opened (a write snapshotted, or a list read)."""
        return self._connection is not None

    def _insert_turn(self, session_id: str, turn_id: str, started: float) -> None:
        try:  # never fail a turn here; snapshot() inserts the row again if this did not
            self._db.execute("INSERT OR IGNORE INTO turns (session_id, turn_id, started) VALUES (?, ?, ?)",
                             (session_id, turn_id, started))
        except sqlite3.Error:
            pass

    def __repr__(self) -> str:
        return f"CheckpointStore({str(self.root_dir)!r})"

    def close(self) -> None:
        global _ACTIVE
        with _ACTIVE_LOCK:
            if _ACTIVE is self:
                _ACTIVE = None
        with self._lock:
            if self._connection is not None:
                self._connection.close()

    # turns ---------------------------------------------------------------------------
    def begin_turn(self, session_id: str, turn_id: str) -> None:
        """Attribute the following snapshots to this turn; makes this store the active one."""
        global _ACTIVE
        with self._lock:
            self._current = (str(session_id), str(turn_id))
            self._begun = (str(session_id), str(turn_id), time.time())
            if self._connection is not None:  # otherwise written when the database opens
                self._insert_turn(*self._begun)
        with _ACTIVE_LOCK:
            _ACTIVE = self

    @property
    def current_turn(self) -> tuple[str, str] | None:
        """``(session_id, turn_id)`` snapshots go to, or None before any turn began."""
        return self._current

    def _turn(self) -> tuple[str, str]:
        if self._current is None:
            self.begin_turn(DEFAULT_SESSION, f"manual-{uuid.uuid4().hex[:8]}")
        assert self._current is not None
        return self._current

    def turns_with_writes(self, session_id: str, *, include_undone: bool = False) -> list[str]:
        """Turn ids of the session that snapshotted files, most recent first."""
        sql = ("SELECT t.turn_id FROM turns t WHERE t.session_id = ? "
               "AND EXISTS (SELECT 1 FROM checkpoints c WHERE c.session_id = t.session_id AND c.turn_id = t.turn_id)")
        if not include_undone:
            sql += " AND t.undone IS NULL"
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY t.seq DESC", (str(session_id),)).fetchall()
        return [r[0] for r in rows]

    # snapshots -----------------------------------------------------------------------
    def snapshot(self, path: str | Path, *, session_id: str | None = None, turn_id: str | None = None) -> Checkpoint:
        """Record ``path`` as it is now, before a write (a file that does not exist too).

        In a turn, only the first snapshot of a path is kept; later calls return it.
        Raises ``ValueError`` for folders, special files and files over the size limit.
        """
        target = absolute_path(path)
        with self._lock:
            if session_id is None or turn_id is None:
                current_session, current_turn = self._turn()
                session_id = session_id or current_session
                turn_id = turn_id or current_turn
            self._db.execute("INSERT OR IGNORE INTO turns (session_id, turn_id, started) VALUES (?, ?, ?)",
                             (session_id, turn_id, time.time()))
            existing = self._get(session_id, turn_id, str(target))
            if existing is not None:
                return existing
            data, mode = self._read(target)
            sha = content_hash(data) if data is not None else None
            base_dir = existing_ancestor(target.parent)
            with _transaction(self._db):
                if data is not None:
                    self._db.execute("INSERT OR IGNORE INTO blobs (sha, size, data) VALUES (?, ?, ?)",
                                     (sha, len(data), data))
                self._db.execute(
                    "INSERT INTO checkpoints (session_id, turn_id, path, existed, sha, size, mode, base_dir, created) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (session_id, turn_id, str(target), int(data is not None), sha,
                     None if data is None else len(data), mode, str(base_dir), time.time()),
                )
            checkpoint = self._get(session_id, turn_id, str(target))
            assert checkpoint is not None
            return checkpoint

    def record_write(self, path: str | Path, data: bytes | None, *, session_id: str | None = None,
                     turn_id: str | None = None) -> None:
        """After a write: remember what the agent left in ``path`` (None: it deleted it)."""
        target = str(absolute_path(path))
        with self._lock:
            if session_id is None or turn_id is None:
                current_session, current_turn = self._turn()
                session_id = session_id or current_session
                turn_id = turn_id or current_turn
            self._db.execute(
                "UPDATE checkpoints SET written = 1, after_exists = ?, after_sha = ?, after_size = ? "
                "WHERE session_id = ? AND turn_id = ? AND path = ?",
                (int(data is not None), None if data is None else content_hash(data), None if data is None else len(data),
                 session_id, turn_id, target),
            )

    def content(self, checkpoint: Checkpoint) -> bytes | None:
        """The previous bytes of a checkpoint (None when the file did not exist)."""
        if checkpoint.sha is None:
            return None
        with self._lock:
            row = self._db.execute("SELECT data FROM blobs WHERE sha = ?", (checkpoint.sha,)).fetchone()
        return None if row is None else bytes(row[0])

    def list(self, session_id: str | None = None, limit: int = 50) -> list[Checkpoint]:
        """Checkpoints, newest first (of one session, or of all)."""
        sql = _SELECT + (" WHERE c.session_id = ?" if session_id is not None else "") + " ORDER BY c.id DESC LIMIT ?"
        params = ((session_id,) if session_id is not None else ()) + (int(limit),)
        with self._lock:
            return [_row(r) for r in self._db.execute(sql, params).fetchall()]

    # builtins.list: inside this class, ``list`` is the method above
    def checkpoints_of(self, session_id: str, turn_id: str) -> builtins.list[Checkpoint]:
        """One turn's checkpoints in the order they were taken."""
        with self._lock:
            rows = self._db.execute(_SELECT + " WHERE c.session_id = ? AND c.turn_id = ? ORDER BY c.id",
                                    (session_id, turn_id)).fetchall()
        return [_row(r) for r in rows]

    # undo ----------------------------------------------------------------------------
    def undo_last_turn(self, session_id: str, *, force: bool = False, root: str | Path | None = None) -> UndoReport:
        """Put back every file the session's latest not-yet-undone turn wrote.

        Files the user changed since the agent's write are conflicts: nothing is restored
        and the turn stays as it is, unless ``force``. ``root`` only shortens the paths
        the report prints.
        """
        with self._lock:
            return undo_last_turn(self, str(session_id), force=force, root=root)

    def mark_undone(self, session_id: str, turn_id: str) -> None:
        """Mark a turn undone, so the next undo goes one turn further back."""
        with self._lock:
            self._db.execute("UPDATE turns SET undone = ? WHERE session_id = ? AND turn_id = ?",
                             (time.time(), session_id, turn_id))

    # helpers -------------------------------------------------------------------------
    def _get(self, session_id: str, turn_id: str, path: str) -> Checkpoint | None:
        row = self._db.execute(_SELECT + " WHERE c.session_id = ? AND c.turn_id = ? AND c.path = ?",
                               (session_id, turn_id, path)).fetchone()
        return None if row is None else _row(row)

    def _read(self, target: Path) -> tuple[bytes | None, int | None]:
        try:
            info = target.stat()
        except FileNotFoundError:
            return None, None
        if stat.S_ISDIR(info.st_mode):
            raise ValueError(f"{target} is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{target} is not a regular file")
        if info.st_size > self.max_snapshot_bytes:
            raise ValueError(f"{target} is too large to checkpoint ({info.st_size} bytes)")
        return target.read_bytes(), stat.S_IMODE(info.st_mode)


_SELECT = ("SELECT c.id, c.session_id, c.turn_id, c.path, c.existed, c.sha, c.size, c.mode, c.created, c.written, "
           "c.after_sha, c.after_size, t.undone IS NOT NULL, c.base_dir FROM checkpoints c "
           "LEFT JOIN turns t ON t.session_id = c.session_id AND t.turn_id = c.turn_id")


def _row(r: tuple) -> Checkpoint:
    return Checkpoint(id=r[0], session_id=r[1], turn_id=r[2], path=r[3], existed=bool(r[4]), sha=r[5], size=r[6],
                      mode=r[7], created=r[8], written=bool(r[9]), after_sha=r[10], after_size=r[11],
                      undone=bool(r[12]), base_dir=r[13])


class _transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, value, tb) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
