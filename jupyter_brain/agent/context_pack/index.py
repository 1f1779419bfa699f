"""WorkspaceIndex: a BM25 index of a folder's passages, kept fresh between turns.

Each search first re-stamps the folder: only files whose (mtime, size) changed, or that
are new, are read and cut into passages again; removed files drop out. The BM25 model
(``bm25s``) is rebuilt only when something changed. One index per folder is kept for the
kernel (``index_for``), since a harness is built per cell.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..context.search import tokenize
from .chunks import Passage, file_passages
from .scan import MAX_FILE_BYTES, MAX_FILES, FileStamp, scan_workspace


@dataclass(frozen=True)
class ScoredPassage:
    anchor: str
    path: str
    text: str
    score: float

    def as_dict(self) -> dict[str, Any]:
        return {"anchor": self.anchor, "path": self.path, "text": self.text, "score": round(self.score, 4)}


@dataclass(frozen=True)
class RefreshStats:
    files: int = 0  # files in the index
    read: int = 0  # files (re)read by this refresh: new or changed
    removed: int = 0
    passages: int = 0


@dataclass
class _Entry:
    stamp: FileStamp
    passages: list[Passage]
    tokens: list[list[str]]


class WorkspaceIndex:
    """Passages of the text files and notebooks under ``root``, searchable with BM25."""

    def __init__(self, root: str | Path, *, max_files: int = MAX_FILES, max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise ValueError(f"the working folder {str(self.root)!r} is not a directory")
        self.max_files = max_files
        self.max_file_bytes = max_file_bytes
        self.last_refresh = RefreshStats()
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self._model: Any = None  # the bm25s index over _flat; None: rebuild on next search
        self._flat: list[tuple[Passage, list[str]]] = []

    def refresh(self) -> RefreshStats:
        """Bring the index up to date with the folder; reads only new or changed files."""
        with self._lock:
            return self._refresh()

    def search(self, query: str, k: int) -> list[ScoredPassage]:
        """The ``k`` best passages for ``query`` (only those sharing a word with it), best first."""
        with self._lock:
            self._refresh()
            words = tokenize(query)
            if k <= 0 or not words or not self._flat:
                return []
            scores = self._bm25().get_scores(words)
            order = sorted(range(len(self._flat)), key=lambda i: (-float(scores[i]), i))
            best: list[ScoredPassage] = []
            for i in order[:k]:
                if float(scores[i]) <= 0:
                    break
                p = self._flat[i][0]
                best.append(ScoredPassage(p.anchor, p.path, p.text, float(scores[i])))
            return best

    # internals ------------------------------------------------------------------------
    def _refresh(self) -> RefreshStats:
        files = scan_workspace(self.root, max_files=self.max_files, max_bytes=self.max_file_bytes)
        seen: set[str] = set()
        read = 0
        for file in files:
            seen.add(file.rel)
            entry = self._entries.get(file.rel)
            if entry is not None and entry.stamp == file.stamp:
                continue
            passages = file_passages(file.path, file.rel)
            tokens = [tokenize(f"{p.path} {p.text}") for p in passages]
            self._entries[file.rel] = _Entry(file.stamp, passages, tokens)
            read += 1
        gone = [rel for rel in self._entries if rel not in seen]
        for rel in gone:
            del self._entries[rel]
        if read or gone:
            self._model = None
            self._flat = [(p, t) for e in self._entries.values() for p, t in zip(e.passages, e.tokens, strict=True) if t]
        self.last_refresh = RefreshStats(len(self._entries), read, len(gone), len(self._flat))
        return self.last_refresh

    def _bm25(self) -> Any:
        if self._model is None:
            import bm25s  # numpy-backed; loaded on the first search, not with the kernel

            model = bm25s.BM25()
            model.index([t for _, t in self._flat], show_progress=False)
            self._model = model
        return self._model


_CACHE: OrderedDict[Path, WorkspaceIndex] = OrderedDict()
_CACHE_LOCK = threading.Lock()
CACHED_FOLDERS = 8


def index_for(folder: str | Path) -> WorkspaceIndex:
    """The kernel's index of ``folder`` (made on first use; the least recent of more than
    ``CACHED_FOLDERS`` is dropped)."""
    root = Path(folder).expanduser().resolve()
    with _CACHE_LOCK:
        index = _CACHE.get(root)
        if index is None:
            index = _CACHE[root] = WorkspaceIndex(root)
            while len(_CACHE) > CACHED_FOLDERS:
                _CACHE.popitem(last=False)
        _CACHE.move_to_end(root)
        return index
