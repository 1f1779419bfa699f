"""Undo of one turn: put back every file it wrote, or nothing at all.

For each file the store remembers the hash of what the agent wrote. When undo finds
something else there (the user edited or deleted the file since), it restores nothing
and reports the conflicts instead — a turn is undone completely or not at all — unless
``force=True``, which overwrites the user's changes too. ``UndoReport`` is what happened,
worded for ``%agent undo``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .display import display_path
from .files import atomic_write, content_hash


class Snapshot(Protocol):
    """What undo reads of a ``Checkpoint`` (the store calls undo, so undo names only this)."""

    @property
    def path(self) -> str: ...

    @property
    def existed(self) -> bool: ...

    @property
    def sha(self) -> str | None: ...

    @property
    def mode(self) -> int | None: ...

    @property
    def written(self) -> bool: ...

    @property
    def after_sha(self) -> str | None: ...

    @property
    def base_dir(self) -> str | None: ...


class SnapshotStore(Protocol):
    """What undo asks of a ``CheckpointStore``."""

    def turns_with_writes(self, session_id: str) -> list[str]: ...

    def checkpoints_of(self, session_id: str, turn_id: str) -> Sequence[Snapshot]: ...

    def content(self, checkpoint: Any) -> bytes | None: ...

    def mark_undone(self, session_id: str, turn_id: str) -> None: ...


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


def undo_last_turn(store: SnapshotStore, session_id: str, *, force: bool = False,
                   root: str | Path | None = None) -> UndoReport:
    """Put back every file the session's latest not-yet-undone turn wrote (see
    ``CheckpointStore.undo_last_turn``, which calls this under the store's lock)."""
    report = UndoReport(session_id, forced=force, root=str(Path(root).resolve()) if root else None)
    turns = store.turns_with_writes(session_id)
    if not turns:
        return report
    report.turn_id = turn_id = turns[0]
    checkpoints = list(reversed(store.checkpoints_of(session_id, turn_id)))
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
                data = store.content(cp)
                if data is None:
                    raise OSError(f"the saved content {cp.sha} is missing from the store")
                atomic_write(Path(cp.path), data, cp.mode)
                report.restored.append(cp.path)
            else:
                _remove(Path(cp.path), cp)
                report.deleted.append(cp.path)
        except OSError as exc:
            report.errors.append((cp.path, exc.strerror or str(exc)))
    store.mark_undone(session_id, turn_id)
    return report


def _state(path: Path) -> str | None:
    """SHA-256 of the file now; None when it does not exist; a marker for non-files."""
    try:
        if path.is_dir():
            return "<folder>"
        return content_hash(path.read_bytes())
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


def _remove(path: Path, cp: Snapshot) -> None:
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
