"""SQLiteMemory: the project folder's episodic memory, ranked by BM25.

Memories live in ``<data_dir>/memory.sqlite``, beside the event log but in a file of their
own (the event log's writer thread never waits for them), so they outlive sessions and
kernels of the same folder. One object plays both roles of ``base``: it recalls memories
for a request (``retrieve``) and, given a model, keeps durable facts of a finished turn
(``extract``, see ``extractor``).
"""

from __future__ import annotations

import builtins
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..context.search import bm25_scores, tokenize
from ..events.database import Database
from ..redact import Redactor
from .base import MAX_TEXT_CHARS, Memory, clean_text

if TYPE_CHECKING:
    from ...providers.base import LLMProvider, Usage
    from ..results import TurnResult
    from .extractor import ModelMemoryExtractor

FILE_NAME = "memory.sqlite"
MEMORY_MODES = ("off", "manual", "auto")  # AgentMagics.memory: off, recall only, recall + extraction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    text TEXT NOT NULL,
    norm TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL DEFAULT '',
    session_id TEXT,
    created REAL NOT NULL
);
"""


def normalized(text: str) -> str:
    """The key that makes two spellings of one fact the same memory (case, spacing, punctuation)."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def memory_id(value: str | int) -> int:
    """``m12``, ``12`` or ``#12`` as the row id 12; a clear error for anything else."""
    text = str(value).strip().lstrip("#")
    if text[:1].lower() == "m":
        text = text[1:]
    if not text.isdigit():
        raise ValueError(f"not a memory id: {value!r} (ids look like m12)")
    return int(text)


class SQLiteMemory:
    """Memories of one project folder, in SQLite, recalled by BM25 relevance.

    ``location``: the data folder (``.jupyter_brain``; the file is ``memory.sqlite`` in it),
    a ``.sqlite`` / ``.db`` file, or ``":memory:"`` (tests). ``provider``: the model that
    ``extract`` asks for durable facts (without one, ``extract`` keeps nothing). Text is
    masked with ``redact`` (default: known API-key formats) before it is stored.
    Safe to share between threads; two kernels on one folder share the file (WAL).
    """

    def __init__(
        self,
        location: str | Path = ":memory:",
        *,
        provider: LLMProvider | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.path = _database_path(location)
        database = Database(self.path, _SCHEMA)
        self._db, self._lock = database.connection, database.lock
        self._writes = 0  # with PRAGMA data_version: whether the cached tokens are current
        self._cache: tuple[tuple[int, int], builtins.list[tuple[int, builtins.list[str]]]] | None = None
        self.provider = provider
        self.redact = redact if redact is not None else Redactor()
        self._extractor: ModelMemoryExtractor | None = None

    def __repr__(self) -> str:
        return f"SQLiteMemory({self.path!r}, memories={len(self)})"

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM memories").fetchone()[0])

    # writing ---------------------------------------------------------------------------
    def add(self, text: str, source: str = "user", *, session_id: str | None = None) -> Memory:
        """Store one fact; the same fact spelled again returns the memory already kept."""
        text = self.redact(clean_text(text))
        if not normalized(text):
            raise ValueError("a memory needs some words: got an empty text")
        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(f"a memory holds one fact of at most {MAX_TEXT_CHARS} characters, got {len(text)}")
        key = normalized(text)
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO memories(text, norm, source, session_id, created) VALUES (?, ?, ?, ?, ?)",
                (text, key, source, session_id, time.time()),
            )
            self._writes += 1
            row = self._db.execute(
                "SELECT id, text, source, created FROM memories WHERE norm = ?", (key,)
            ).fetchone()
        return _memory(row)

    def forget(self, id: str | int) -> bool:
        """Delete a memory by id (``m12`` or ``12``); False when there is none."""
        rowid = memory_id(id)
        with self._lock:
            deleted = self._db.execute("DELETE FROM memories WHERE id = ?", (rowid,)).rowcount
            self._writes += 1
        return bool(deleted)

    def clear(self) -> int:
        """Delete every memory; returns how many there were."""
        with self._lock:
            deleted = self._db.execute("DELETE FROM memories").rowcount
            self._writes += 1
        return int(deleted)

    # reading ---------------------------------------------------------------------------
    def get(self, id: str | int) -> Memory | None:
        with self._lock:
            row = self._db.execute(
                "SELECT id, text, source, created FROM memories WHERE id = ?", (memory_id(id),)
            ).fetchone()
        return None if row is None else _memory(row)

    def list(self, limit: int | None = None) -> list[Memory]:
        """Every memory, oldest first (the last ``limit`` when given)."""
        with self._lock:
            rows = self._db.execute("SELECT id, text, source, created FROM memories ORDER BY id").fetchall()
        if limit is not None:
            rows = rows[-limit:] if limit > 0 else []
        return [_memory(r) for r in rows]

    def search(self, query: str, k: int = 10) -> builtins.list[Memory]:
        """The ``k`` memories most relevant to ``query`` (BM25), best first, with scores."""
        return self.retrieve(query, "", k)

    def retrieve(self, query: str, session_id: str, k: int) -> builtins.list[Memory]:
        """``MemoryRetriever``: memories of the whole folder sharing words with ``query``,
        best first (ties: the newer first). ``session_id`` does not narrow them: a fact
        learned in one session holds in the others."""
        if k <= 0:
            return []
        words = tokenize(query)
        docs = self._documents()
        if not words or not docs:
            return []
        scores = bm25_scores([tokens for _, tokens in docs], words)
        ranked = sorted(
            ((score, rowid) for (rowid, _), score in zip(docs, scores, strict=True) if score > 0),
            key=lambda pair: (-pair[0], -pair[1]),
        )[:k]
        if not ranked:
            return []
        by_id = self._rows([rowid for _, rowid in ranked])
        return [_memory(by_id[rowid], score) for score, rowid in ranked if rowid in by_id]

    # the extractor role -------------------------------------------------------------------
    def extract(self, turn: TurnResult, session_id: str) -> builtins.list[Memory]:
        """``MemoryExtractor``: ask ``provider`` for durable facts of the turn and keep the new
        ones (nothing without a provider). See ``ModelMemoryExtractor``."""
        if self.provider is None:
            return []
        from .extractor import ModelMemoryExtractor

        if self._extractor is None or self._extractor.provider is not self.provider:
            self._extractor = ModelMemoryExtractor(self, self.provider)
        return self._extractor.extract(turn, session_id)

    @property
    def last_usage(self) -> Usage | None:
        """The tokens of the last ``extract`` call's model request (None: no call)."""
        return None if self._extractor is None else self._extractor.last_usage

    def roles(self, mode: str, provider: LLMProvider | None = None, *,
              secrets: tuple[str, ...] = ()) -> dict[str, Any]:
        """The harness keywords for a memory mode: ``off`` none, ``manual`` recall,
        ``auto`` recall and extraction by ``provider`` (its key values masked)."""
        if mode not in MEMORY_MODES:
            raise ValueError(f"memory mode must be one of {', '.join(MEMORY_MODES)}, got {mode!r}")
        roles: dict[str, Any] = {}
        if mode in ("manual", "auto"):
            roles["memory_retriever"] = self
        if mode == "auto" and provider is not None:
            from .extractor import ModelMemoryExtractor

            roles["memory_extractor"] = ModelMemoryExtractor(self, provider, redact=Redactor(secrets))
        return roles

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # internals -------------------------------------------------------------------------
    def _documents(self) -> builtins.list[tuple[int, builtins.list[str]]]:
        """(id, tokens) of every memory; re-read only after a write (here or by another
        connection: ``PRAGMA data_version`` changes then)."""
        with self._lock:
            version = (int(self._db.execute("PRAGMA data_version").fetchone()[0]), self._writes)
            if self._cache is not None and self._cache[0] == version:
                return self._cache[1]
            rows = self._db.execute("SELECT id, text FROM memories ORDER BY id").fetchall()
            docs = [(int(r[0]), tokenize(r[1])) for r in rows]
            self._cache = (version, docs)
            return docs

    def _rows(self, ids: builtins.list[int]) -> dict[int, tuple]:
        marks = ", ".join("?" * len(ids))
        with self._lock:
            rows = self._db.execute(
                f"SELECT id, text, source, created FROM memories WHERE id IN ({marks})", ids
            ).fetchall()
        return {int(r[0]): r for r in rows}


def _memory(row: tuple, score: float = 0.0) -> Memory:
    return Memory(id=f"m{row[0]}", text=row[1], source=row[2], created=row[3], score=round(float(score), 4))


def _database_path(location: str | Path) -> str:
    text = str(location)
    if text == ":memory:":
        return text
    path = Path(location).expanduser()
    if path.suffix.lower() in (".sqlite", ".sqlite3", ".db"):
        return str(path)
    return str(path / FILE_NAME)
