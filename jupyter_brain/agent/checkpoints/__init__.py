"""Checkpoints: what a file held before the agent wrote it, and undo per turn.

The write tools call ``CheckpointStore.snapshot(path)`` before every write and
``record_write(path, data)`` after it. The *first* snapshot of a path in a turn is the
one undo needs (the file as it was before the turn); later writes of the same path in
that turn only update the hash of what the agent wrote last. ``undo_last_turn`` puts
back every file of the session's most recent turn-with-writes, newest write first, and
marks that turn undone, so the next undo goes one turn further back.

The parts, one job each:

- ``store``: the SQLite index and content BLOBs, turns, snapshots, the active store;
- ``undo``: putting a turn's files back, conflicts, and the ``UndoReport`` it prints;
- ``files``: hashing and atomically writing the files on disk;
- ``display``: showing a path relative to the project folder.

Every name is re-exported here, so ``jupyter_brain.agent.checkpoints`` stays the one
import path.
"""

from __future__ import annotations

from .display import display_path
from .files import atomic_write, default_file_mode
from .store import DEFAULT_SESSION, MAX_SNAPSHOT_BYTES, Checkpoint, CheckpointStore, active_store
from .undo import UndoReport

__all__ = [
    "DEFAULT_SESSION",
    "MAX_SNAPSHOT_BYTES",
    "Checkpoint",
    "CheckpointStore",
    "UndoReport",
    "active_store",
    "atomic_write",
    "default_file_mode",
    "display_path",
]
