"""The files checkpoints are about, on disk: their canonical path, content hash, and an
atomic write, so a snapshot or an undo never leaves half a file behind."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path


def absolute_path(path: str | Path) -> Path:
    """Absolute and symlink-free: the key a file is checkpointed under."""
    return Path(os.path.realpath(os.path.abspath(os.fspath(path))))


def content_hash(data: bytes) -> str:
    """SHA-256 (hex) of a file's bytes: how the store addresses a content."""
    return hashlib.sha256(data).hexdigest()


def existing_ancestor(folder: Path) -> Path:
    """The nearest folder up from ``folder`` that exists (``folder`` itself if it does)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


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
