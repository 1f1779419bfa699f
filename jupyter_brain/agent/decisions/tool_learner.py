"""``ToolUsageLearner``: which tools helped on which questions, so tool selection can
offer them again on similar questions.

An ``AutonomousResearchLearner``: ``observe(turn)`` keeps the question of a turn that
ended with an answer and the tools that ran ok in it; ``tool_boosts(question)`` finds
the most similar past questions (BM25, the same ranking as tool selection) and gives
their tools a boost that ``select_tools`` adds to its own scores. Lexical selection
alone misses a tool whose description shares no words with the question ("how did
churn move" → ``query_warehouse``); a past question worded like the new one does not.
Kept in memory, and in SQLite (a table beside the decisions) when given a database.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..context.search import bm25_scores, tokenize
from ..events.database import Database

if TYPE_CHECKING:
    from ..events import EventLog
    from ..results import TurnResult

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tool_usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,
    session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    question TEXT NOT NULL,
    tools TEXT NOT NULL
);
"""

_log = logging.getLogger("jupyter_brain.decisions")
ToolBoosts = Callable[[str], Mapping[str, float]]


@dataclass(frozen=True)
class ToolUse:
    """One past question and the tools that ran ok for it."""

    question: str
    tools: tuple[str, ...]
    tokens: tuple[str, ...]


class ToolUsageLearner:
    """Remembers the tools that succeeded per question; boosts them on similar ones.

    ``source``: an ``EventLog`` or a path to keep what it learns across kernels (None:
    in memory). ``weight``: the largest boost, in units of the best lexical match of
    the request (1.0: a tool that helped on a near-identical question ranks with the
    best-matching tool). ``neighbours``: how many similar past questions vote;
    ``min_similarity``: how alike (0-1, 1 = the same words) a question must be to vote.
    """

    def __init__(self, source: EventLog | str | Path | None = None, *, weight: float = 1.0,
                 neighbours: int = 5, min_similarity: float = 0.1, only_completed: bool = True,
                 max_examples: int = 5000, ignore: frozenset[str] = frozenset({"read_artifact"})) -> None:
        if weight < 0 or neighbours < 1 or not 0 <= min_similarity <= 1:
            raise ValueError("ToolUsageLearner: weight >= 0, neighbours >= 1 and 0 <= min_similarity <= 1")
        self.weight = weight
        self.neighbours = neighbours
        self.min_similarity = min_similarity
        self.only_completed = only_completed
        self.max_examples = max_examples
        self.ignore = ignore
        self._lock = threading.Lock()
        self._examples: list[ToolUse] = []
        self._db = Database(source, _SCHEMA) if source is not None else None
        if self._db is not None:
            with self._db.lock:
                rows = self._db.connection.execute(
                    "SELECT question, tools FROM tool_usage ORDER BY id DESC LIMIT ?", (max_examples,)
                ).fetchall()
            for question, tools in reversed(rows):
                self._add(question, tuple(json.loads(tools)))

    def __len__(self) -> int:
        return len(self._examples)

    @property
    def examples(self) -> list[ToolUse]:
        return list(self._examples)

    # AutonomousResearchLearner ----------------------------------------------------------
    def observe(self, turn: TurnResult) -> None:
        """Learn from a finished turn: its question and the tools that ran ok in it."""
        if self.only_completed and turn.status != "completed":
            return
        question = question_of(turn)
        tools = tuple(dict.fromkeys(c.name for c in turn.tool_calls if c.status == "ok" and c.name not in self.ignore))
        if not question or not tools:
            return
        self.learn(question, tools, session_id=turn.session_id, turn_id=turn.turn_id)

    def learn(self, question: str, tools: tuple[str, ...] | list[str], *, session_id: str = "",
              turn_id: str = "") -> None:
        """Remember that ``tools`` helped on ``question`` (``observe`` calls this)."""
        tools = tuple(tools)
        if self._db is not None:
            with self._db.lock:
                self._db.connection.execute(
                    "INSERT INTO tool_usage(created, session_id, turn_id, question, tools) VALUES (?, ?, ?, ?, ?)",
                    (time.time(), session_id, turn_id, self._db.scrub(question), json.dumps(tools)),
                )
        self._add(question, tools)

    # what selection asks ---------------------------------------------------------------
    def tool_boosts(self, question: str) -> dict[str, float]:
        """Tool name -> boost (0..``weight``): the summed similarity of the most similar
        past questions each tool helped on, capped at one full ``weight``."""
        query = tokenize(question or "")
        with self._lock:
            examples = list(self._examples)
        if not query or not examples or self.weight == 0:
            return {}
        # The question itself as the last document: its score against itself is the scale
        # that makes a similarity of 1 mean "the same words".
        scores = bm25_scores([e.tokens for e in examples] + [tuple(query)], query)
        top = scores[-1]
        if top <= 0:
            return {}
        similar = sorted(((s / top, i) for i, s in enumerate(scores[:-1])), reverse=True)[: self.neighbours]
        boosts: dict[str, float] = {}
        for similarity, i in similar:
            if similarity < self.min_similarity:
                break
            for name in examples[i].tools:
                boosts[name] = boosts.get(name, 0.0) + min(similarity, 1.0)
        return {name: self.weight * min(value, 1.0) for name, value in boosts.items()}

    def _add(self, question: str, tools: tuple[str, ...]) -> None:
        tokens = tuple(tokenize(question))
        if not tokens:
            return
        with self._lock:
            self._examples.append(ToolUse(question, tools, tokens))
            del self._examples[: max(0, len(self._examples) - self.max_examples)]


def question_of(turn: TurnResult) -> str:
    """The user message that started ``turn`` (its first new message)."""
    for message in turn.new_messages:
        if message.get("role") == "user":
            content: Any = message.get("content", "")
            if isinstance(content, list):  # content blocks: their text
                content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
            return str(content)
    return ""


def tool_boosts_of(learner: Any) -> ToolBoosts | None:
    """The learner's ``tool_boosts`` (None when it has none), failing quietly: a broken
    learner leaves selection as it would be without one."""
    boosts = getattr(learner, "tool_boosts", None)
    if not callable(boosts):
        return None

    def safe(question: str) -> Mapping[str, float]:
        try:
            return dict(boosts(question))
        except Exception as exc:  # noqa: BLE001 - an optional integration must not break the turn
            _log.warning("tool learner failed, selecting tools without it: %s", exc)
            return {}

    return safe


_DEFAULT: weakref.WeakKeyDictionary[Any, ToolUsageLearner] = weakref.WeakKeyDictionary()
_DEFAULT_LOCK = threading.Lock()


def default_tool_learner(event_log: EventLog) -> ToolUsageLearner | None:
    """The one learner on ``event_log`` (what it learned is loaded once per kernel); None,
    with a warning, when the database cannot hold it."""
    with _DEFAULT_LOCK:
        learner = _DEFAULT.get(event_log)
        if learner is None:
            try:
                learner = _DEFAULT[event_log] = ToolUsageLearner(event_log)
            except sqlite3.Error as exc:
                _log.warning("no tool learner: %s", exc)
        return learner
