"""Which files of the working folder the context pack reads, and their stamps now.

A walk that never leaves the folder: hidden files and folders (``.git``,
``.jupyter_brain``, ``.ipynb_checkpoints``), virtualenvs, ``node_modules`` and caches are
skipped, symlinks pointing outside are ignored, only text-like suffixes are read (so
binaries never are) and big files are left out — except tables, of which only the
head is read anyway. A stamp (mtime, size) is what tells the index a file changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

TEXT_SUFFIXES = frozenset({
    ".py", ".pyi", ".md", ".markdown", ".txt", ".rst", ".csv", ".tsv", ".json", ".toml", ".yaml", ".yml",
    ".cfg", ".ini", ".sql", ".r", ".jl", ".sh", ".tex", ".ipynb",
})
HEAD_ONLY_SUFFIXES = frozenset({".csv", ".tsv"})  # only their first lines are read
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "env", "virtualenv"})
MAX_FILE_BYTES = 1_000_000
MAX_FILES = 5_000
MAX_ENTRIES = 100_000  # names looked at: a home folder as the working folder ends the walk early


@dataclass(frozen=True)
class FileStamp:
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class WorkspaceFile:
    path: Path  # absolute, under the root
    rel: str  # relative to the root, "/"-separated: what anchors name
    stamp: FileStamp


def scan_workspace(root: Path, *, max_files: int = MAX_FILES, max_bytes: int = MAX_FILE_BYTES) -> list[WorkspaceFile]:
    """The readable files under ``root`` (resolved), in a stable order, at most ``max_files``."""
    found: list[WorkspaceFile] = []
    seen = 0
    for folder, dirs, names in os.walk(root, followlinks=False):
        seen += len(dirs) + len(names)
        if seen > MAX_ENTRIES:
            return found
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if not _skipped_dir(here / d, d))
        for name in sorted(names):
            if name.startswith(".") or Path(name).suffix.lower() not in TEXT_SUFFIXES:
                continue
            file = _readable(root, here / name, max_bytes)
            if file is not None:
                found.append(file)
                if len(found) >= max_files:
                    return found
    return found


def _skipped_dir(path: Path, name: str) -> bool:
    if name.startswith(".") or name in SKIPPED_DIRS or path.is_symlink():
        return True
    # A virtualenv or conda env under any name.
    return (path / "pyvenv.cfg").exists() or (path / "conda-meta").is_dir()


def _readable(root: Path, path: Path, max_bytes: int) -> WorkspaceFile | None:
    try:
        if path.is_symlink() and not path.resolve().is_relative_to(root):
            return None
        st = path.stat()
    except (OSError, RuntimeError, ValueError):
        return None
    if not path.is_file():
        return None
    if st.st_size > max_bytes and path.suffix.lower() not in HEAD_ONLY_SUFFIXES:
        return None
    return WorkspaceFile(path, path.relative_to(root).as_posix(), FileStamp(st.st_mtime_ns, st.st_size))
