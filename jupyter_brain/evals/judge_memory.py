"""A judge's verdicts, kept so that a replayed comparison does not ask its model again.

A replayed ``%%compare`` gives the answers it recorded, so asking the judge about them again
would only spend money for an opinion already given (and perhaps a different one). A
verdict is keyed by what the judge read: the question, the answer, the rubric and which
judge (its provider as named and its model): an edited rubric, another answer or another
judge is a new question and is asked. ``RecordedVerdicts`` holds the verdicts a cell has
(from its saved notebook and the event log) and those its judge gives now; the notebook
layer loads and saves them (``notebook/compare_judge.py``).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

RECORDED_NOTE = "recorded verdict, not asked again"


def verdict_key(question: str, answer: str, rubric: str, judge: str) -> str:
    """What the judge read, as a short hash (whitespace at the ends aside)."""
    text = json.dumps([question.strip(), answer.strip(), rubric.strip(), judge.strip()], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@runtime_checkable
class VerdictMemory(Protocol):
    """Where a judge looks for a verdict it gave before, and leaves the new ones."""

    def recall(self, key: str) -> dict[str, Any] | None: ...

    def keep(self, key: str, verdict: dict[str, Any]) -> None: ...


@dataclass
class RecordedVerdicts:
    """The verdicts known to a cell (``known``) and given in this run (``new``).
    ``reuse=False`` (``--rerun``): recall nothing, ask again. ``strict`` (``--replay
    strict``): a verdict that was not recorded is not asked for either."""

    known: dict[str, dict[str, Any]] = field(default_factory=dict)
    reuse: bool = True
    strict: bool = False
    new: dict[str, dict[str, Any]] = field(default_factory=dict)
    used: dict[str, dict[str, Any]] = field(default_factory=dict)  # recalled in this run
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def recall(self, key: str) -> dict[str, Any] | None:
        if not self.reuse:
            return None
        with self._lock:
            found = self.known.get(key)  # given before this comparison (two runs now are each asked)
            if found is not None:
                self.used[key] = found
            return found

    def keep(self, key: str, verdict: dict[str, Any]) -> None:
        with self._lock:
            self.new[key] = dict(verdict)

    def this_run(self) -> list[dict[str, Any]]:
        """Every verdict this comparison used or gave, with its key (what a saved cell carries)."""
        with self._lock:
            merged = {**self.used, **self.new}
        return [{"key": key, **verdict} for key, verdict in sorted(merged.items())]


__all__ = ["RECORDED_NOTE", "RecordedVerdicts", "VerdictMemory", "verdict_key"]
