"""Checkpoints: what a file held before the agent wrote it, and undo per turn.

The write tools call ``CheckpointStore.snapshot(path)`` before every write and
``record_write(path, data)`` after it. The *first* snapshot of a path in a turn is the
one undo needs (the file as it was before the turn); later writes of the same path in
that turn only update the hash of what the agent wrote last. ``undo_last_turn`` puts
back every file of the session's most recent turn-with-writes, newest write first, and
marks that turn undone, so the next undo goes one turn further back.

Storage (under ``root_dir``, by default ``<data_dir>/checkpoints/``):

``checkpoints.sqlite`` (WAL) holds the index *and* the previous contents, as BLOBs
addressed by their SHA-256 (one copy per distinct content, however often it is
snapshotted). Why BLOBs in SQLite rather than loose files: a snapshot is one
transaction, so a crash can never leave an index row pointing at a missing blob or a
blob nobody references; the write tools cap files at a few MB, where SQLite reads and
writes BLOBs as fast as the file system; and the whole store is one file to copy,
inspect or delete.

Conflicts: for each file the store remembers the hash of what the agent wrote. When
undo finds something else there (the user edited or deleted the file since), it
restores nothing and reports the conflicts instead — a turn is undone completely or not
at all — unless ``force=True``, which overwrites the user's changes too.

Which turn a snapshot belongs to: ``begin_turn(session_id, turn_id)`` (called by the
harness at turn start) makes it the store's current turn and the store the process's
*active* store (``active_store()``), which write tools built without an explicit store
use. Writes made before any ``begin_turn`` go to an implicit ``manual-…`` turn of the
session ``"default"``. Thread-safe (one lock around one connection); several processes
may share the folder (WAL, busy timeout), and a new ``CheckpointStore`` on the same
folder — after a kernel restart — sees everything.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

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


@dataclass
class UndoReport:
    """What ``undo_last_turn`` did (or would not do)."""

    session_id: str
    turn_id: str | None = None  # None: nothing to undo
    restored: list[str] = field(default_factory=list)  # put back to the previous content
    deleted: list[str] = field(default_factory=list)  # created by the turn, removed
    unchanged: list[str] = field(default_factory=list)  # already as before the turn
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, OS error)
    forced: bool = False
    root: str | None = None  # paths are shown relative to this folder when inside it
    turn_label: str | None = None  # how to name the turn when shown (e.g. "3", its number)

    @property
    def undone(self) -> bool:
        """Whether the turn is now marked undone."""
        return self.turn_id is not None and not (self.conflicts and not self.forced)

    @property
    def ok(self) -> bool:
        return self.undone and not self.errors

    def _show(self, path: str) -> str:
        return display_path(path, self.root)

    def __str__(self) -> str:
        if self.turn_id is None:
            return f"Nothing to undo: session {self.session_id!r} has no turns with file writes left."
        head = f"turn {self.turn_label or self.turn_id} of session {self.session_id!r}"
        if self.conflicts and not self.forced:
            lines = [f"Nothing was undone for {head}: {len(self.conflicts)} file"
                     f"{'s' * (len(self.conflicts) != 1)} changed since the agent wrote "
                     f"{'them' if len(self.conflicts) != 1 else 'it'}:"]
            lines += [f"  conflict  {self._show(p)} ({why})" for p, why in self.conflicts]
            lines.append("Keep your changes, or undo with --force (force=True) to overwrite them.")
            return "\n".join(lines)
        lines = [f"Undid {head}:"]
        lines += [f"  restored  {self._show(p)}" for p in self.restored]
        lines += [f"  deleted   {self._show(p)}" for p in self.deleted]
        lines += [f"  unchanged {self._show(p)} (already as before the turn)" for p in self.unchanged]
        lines += [f"  forced    {self._show(p)} (overwrote: {why})" for p, why in self.conflicts]
        lines += [f"  FAILED    {self._show(p)}: {why}" for p, why in self.errors]
        return "\n".join(lines)


def display_path(path: str, root: str | Path | None = None) -> str:
    """``path`` relative to ``root`` when it lies inside it, else as it is."""
    if root:
        try:
            return Path(path).relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


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
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.executescript(_SCHEMA)
        self._current: tuple[str, str] | None = None

    def __repr__(self) -> str:
        return f"CheckpointStore({str(self.root_dir)!r})"

    def close(self) -> None:
        global _ACTIVE
        with _ACTIVE_LOCK:
            if _ACTIVE is self:
                _ACTIVE = None
        with self._lock:
            self._db.close()

    # turns ---------------------------------------------------------------------------
    def begin_turn(self, session_id: str, turn_id: str) -> None:
        """Attribute the following snapshots to this turn; makes this store the active one."""
        global _ACTIVE
        with self._lock:
            self._current = (str(session_id), str(turn_id))
            try:  # never fail a turn here; snapshot() inserts the row again if this did not
                self._db.execute(
                    "INSERT OR IGNORE INTO turns (session_id, turn_id, started) VALUES (?, ?, ?)",
                    (str(session_id), str(turn_id), time.time()),
                )
            except sqlite3.Error:
                pass
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
        target = _absolute(path)
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
            sha = _sha(data) if data is not None else None
            base_dir = _existing_ancestor(target.parent)
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
        target = str(_absolute(path))
        with self._lock:
            if session_id is None or turn_id is None:
                current_session, current_turn = self._turn()
                session_id = session_id or current_session
                turn_id = turn_id or current_turn
            self._db.execute(
                "UPDATE checkpoints SET written = 1, after_exists = ?, after_sha = ?, after_size = ? "
                "WHERE session_id = ? AND turn_id = ? AND path = ?",
                (int(data is not None), None if data is None else _sha(data), None if data is None else len(data),
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

    def checkpoints_of(self, session_id: str, turn_id: str) -> list[Checkpoint]:
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
        session_id = str(session_id)
        with self._lock:
            report = UndoReport(session_id, forced=force, root=str(Path(root).resolve()) if root else None)
            turns = self.turns_with_writes(session_id)
            if not turns:
                return report
            report.turn_id = turn_id = turns[0]
            checkpoints = list(reversed(self.checkpoints_of(session_id, turn_id)))
            plans = []
            for cp in checkpoints:
                now = _state(Path(cp.path))
                before = cp.sha if cp.existed else None
                expected = (cp.after_sha if cp.written else before)
                if now == before:
                    plans.append((cp, "unchanged"))
                    continue
                if now != expected:
                    report.conflicts.append((cp.path, _conflict_reason(now, expected)))
                plans.append((cp, "restore"))
            if report.conflicts and not force:
                return report
            for cp, plan in plans:
                if plan == "unchanged":
                    report.unchanged.append(cp.path)
                    continue
                try:
                    if cp.existed:
                        data = self.content(cp)
                        if data is None:
                            raise OSError(f"the saved content {cp.sha} is missing from the store")
                        atomic_write(Path(cp.path), data, cp.mode)
                        report.restored.append(cp.path)
                    else:
                        _remove(Path(cp.path), cp)
                        report.deleted.append(cp.path)
                except OSError as exc:
                    report.errors.append((cp.path, exc.strerror or str(exc)))
            self._db.execute("UPDATE turns SET undone = ? WHERE session_id = ? AND turn_id = ?",
                             (time.time(), session_id, turn_id))
            return report

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


def _absolute(path: str | Path) -> Path:
    return Path(os.path.realpath(os.path.abspath(os.fspath(path))))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _state(path: Path) -> str | None:
    """SHA-256 of the file now; None when it does not exist; a marker for non-files."""
    try:
        if path.is_dir():
            return "<folder>"
        return _sha(path.read_bytes())
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"<unreadable: {exc.strerror}>"


def _conflict_reason(now: str | None, expected: str | None) -> str:
    if now is None:
        return "deleted since the agent wrote it"
    if expected is None:
        return "created again since the agent deleted it"
    if now.startswith("<"):
        return f"now {now.strip('<>')}"
    return "changed since the agent wrote it"


def _existing_ancestor(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _remove(path: Path, cp: Checkpoint) -> None:
    """Delete a file the turn created, then the folders it had to create for it."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    base = Path(cp.base_dir) if cp.base_dir else None
    folder = path.parent
    while base is not None and folder != base and folder.is_relative_to(base):
        try:
            folder.rmdir()  # only when empty
        except OSError:
            break
        folder = folder.parent


def default_file_mode() -> int:
    """Permission bits a new file gets from ``open()`` under the current umask."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it (and put it back at once)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and
    ``os.replace``, so readers see the old or the new content, never half of it.
    ``mode`` (permission bits) defaults to the existing file's, or the umask's for a new file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = default_file_mode()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
