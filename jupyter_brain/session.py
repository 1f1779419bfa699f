"""Kernel-held sessions: named conversations with their history, costs and event log.

A ``Session`` outlives cells: each ``%%agent`` cell is one turn of its history (run again, the
cell's new turn replaces its earlier one: ``cell_turns.py``).
Everything is also in the SQLite event log, so ``SessionManager.use(name)`` in a fresh
kernel picks a conversation up where it stopped. Nothing here imports IPython.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent.artifacts import ArtifactStore
from .agent.cost import SessionCostTracker
from .agent.decisions import default_decision_store, default_tool_learner
from .agent.events import EventLog
from .agent.executor import Approver
from .agent.harness import AgentHarness, TurnResult
from .agent.history import answer_unanswered_calls
from .agent.memory import MemoryExtractor, MemoryRetriever
from .agent.session_state import SessionState
from .agent.tools import AgentToolRegistry, ToolSpec
from .cell_turns import CellHistory, CellRun
from .providers.base import LLMProvider
from .settings_model import AgentOptions
from .turn_costs import record_turn_cost

if TYPE_CHECKING:
    from .agent.memory.sqlite import SQLiteMemory


class Session:
    """One named conversation. ``run`` adds a turn; ``reset`` starts over."""

    def __init__(
        self,
        name: str,
        event_log: EventLog,
        *,
        history: list[dict[str, Any]] | None = None,
        artifacts: ArtifactStore | None = None,
    ) -> None:
        self.name = name
        self.event_log = event_log
        self.history: list[dict[str, Any]] = list(history or [])
        self.cost_tracker = SessionCostTracker()
        self.artifacts = artifacts or ArtifactStore()
        self.results: list[TurnResult] = []
        self.overrides: dict[str, str] = {}  # tool name -> "allow" | "deny"
        self.last_harness: AgentHarness | None = None
        # What the conversation learns (token calibration, context level, thinking
        # counters) outlives the per-cell harness.
        self.state = SessionState()
        self.cells = CellHistory(event_log, name, self.history)  # the turn of each message; a cell's re-run
        self.resumed_turns = 0  # turns picked up from the event log when this kernel opened it
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Session(name={self.name!r}, turns={len(self.turns())}, messages={len(self.history)})"

    def turns(self):
        return self.event_log.turns(self.name)

    def build_harness(
        self,
        provider: LLMProvider,
        tools: list[ToolSpec],
        options: AgentOptions,
        *,
        approver: Approver | None = None,
        workspace: Callable[[], str] | None = None,
        working_directory: str = ".",
        prompt_directory: str | None = None,
        secrets: tuple[str, ...] = (),
        checkpoint_store: Any = None,
        memory_retriever: MemoryRetriever | None = None,
        memory_extractor: MemoryExtractor | None = None,
        web_search: Callable[[str], Any] | None = None,
        hooks: Sequence[Any] = (),
    ) -> AgentHarness:
        registry = AgentToolRegistry(tools, permission_mode=options.permission)
        for tool_name, rule in self.overrides.items():
            (registry.allow if rule == "allow" else registry.deny)(tool_name)
        return AgentHarness(
            provider,
            registry,
            self.event_log,
            max_steps=options.max_steps,
            timeout_s=options.timeout,
            think_level=options.think,
            reflect_every=options.reflect_every,
            stream=options.stream,
            redact_logs=True,
            cost_tracker=self.cost_tracker,
            strategy=None if options.strategy == "none" else options.strategy,
            workspace=workspace,
            approver=approver,
            compaction=options.compaction,
            context_budget=options.context_budget,
            auto_compact=options.auto_compact,
            enable_semantic_selection=options.max_tools > 0,
            max_tools_per_turn=options.max_tools or 25,
            artifacts=self.artifacts,
            working_directory=working_directory,
            prompt_directory=prompt_directory,
            secrets=secrets,
            checkpoint_store=checkpoint_store,
            memory_retriever=memory_retriever,  # AgentMagics.memory (SQLiteMemory.roles)
            memory_extractor=memory_extractor,
            web_search=web_search,  # --web on: the notebook passes @jupyter_brain.web_search's function
            session_state=self.state,
            thinking_phase=options.thinking_phase != "off",
            thinking_strategy="summary" if options.thinking_phase == "off" else options.thinking_phase,
            decision_store=default_decision_store(self.event_log),  # %agent decisions
            # Tools that helped on similar questions rank higher when max_tools selects.
            autonomous_research_learner=default_tool_learner(self.event_log),
            hooks=hooks,  # the user's (%agent hooks add NAME), after the built-in integrations
        )

    def run(
        self,
        prompt: str,
        harness: AgentHarness,
        *,
        on_event: Callable[[Any], Any] | None = None,
        cancel: threading.Event | None = None,
        cell: CellRun | None = None,
        append: bool = False,
        **turn_options: Any,
    ) -> TurnResult:
        """One turn; the history continues from whatever the turn left (always valid).
        ``cell``: the cell it runs from; its earlier turns leave the history first, unless
        ``append`` (``cell_turns.py``).
        ``turn_options``: ``run_turn``'s per-turn keywords (top_k, show_citations, ...)."""
        with self._lock:
            self.last_harness = harness
            history = self.cells.before_turn(self.history, cell, append=append)
            result = harness.run_turn(self.name, history, prompt, on_event=on_event, cancel=cancel,
                                      **turn_options)
            self.history = self.cells.after_turn(result, cell, append=append)
            self.results.append(result)
            record_turn_cost(self.event_log, self.name, self.cost_tracker.turn(result.turn_id))  # %agent cost
            return result

    def reset(self) -> None:
        with self._lock:
            self.history = []
            self.results = []
            self.state = SessionState()
            self.cells.reset()
            self.event_log.replace_history(self.name, [])


class SessionManager:
    """All sessions of a kernel, one of them current, sharing one event log."""

    def __init__(self, data_dir: str | Path = ".jupyter_brain", *, event_log: EventLog | None = None,
                 first_session: str | Callable[[EventLog], str] = "default") -> None:
        """``first_session``: the current session's name, or what picks it from the log
        (a notebook kernel starts a fresh one: ``notebook/notebook_session.py``)."""
        self.data_dir = Path(data_dir)
        if event_log is None:
            event_log = EventLog(self.data_dir / "events.sqlite")
        self.event_log = event_log
        self.artifacts = ArtifactStore(self.data_dir / "artifacts")
        self.sessions: dict[str, Session] = {}
        self._memory: SQLiteMemory | None = None
        self.current = self.use(first_session if isinstance(first_session, str) else first_session(event_log))

    @property
    def memory(self) -> SQLiteMemory:
        """The folder's episodic memory, ``<data_dir>/memory.sqlite``, opened on first use."""
        if self._memory is None:
            from .agent.memory.sqlite import SQLiteMemory

            self._memory = SQLiteMemory(self.data_dir)
        return self._memory

    def use(self, name: str) -> Session:
        """Switch to a session, reopening it from the event log if this kernel has not seen it."""
        name = _check_name(name)
        session = self.sessions.get(name)
        if session is None:
            history = self.event_log.load_history(name)
            repair = _cut_off_repair(history)
            if repair:  # the kernel died mid-turn: close that turn in the log too
                turns = self.event_log.turns(name)
                self.event_log.append_messages(name, turns[-1].turn_id if turns else "", repair)
                self.event_log.flush()
                history += repair
            session = Session(name, self.event_log, history=history, artifacts=self.artifacts)
            session.resumed_turns = len(self.event_log.turns(name)) - len(session.cells.table.replaced(name))
            self.sessions[name] = session
        self.current = session
        return session

    def new(self, name: str | None = None) -> Session:
        """A fresh session (a reused name starts from an empty history)."""
        if name is None:
            taken = set(self.sessions) | set(self.event_log.sessions())
            n = 1
            while f"session-{n}" in taken:
                n += 1
            name = f"session-{n}"
        session = self.use(name)
        if session.history:
            session.reset()
        return session

    def known(self) -> list[str]:
        """Sessions in the event log (least recently active first), then this kernel's new ones."""
        names = list(self.event_log.sessions())
        names += [n for n in self.sessions if n not in names]
        return names


CUT_OFF_NOTE = (
    "[This turn was cut off before it finished: the kernel stopped (crash, restart or kill) "
    "while it ran. The history is kept up to the last completed step; ask again to continue.]"
)


def _cut_off_repair(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages that make a history cut off mid-turn valid for the next API call.

    The log commits a turn's messages step by step, so after a crash the history can end
    with tool results (or, defensively, with calls that have none) instead of an answer:
    unanswered calls get an error result, and an assistant note says what happened.
    """
    added: list[dict[str, Any]] = []
    last = next((i for i in range(len(history) - 1, -1, -1)
                 if history[i].get("role") == "assistant" and history[i].get("tool_calls")), None)
    if last is not None and all(m.get("role") == "tool" for m in history[last + 1:]):
        # Only tool results follow the last calls, so the fillers land at the end.
        tail = history[last:]
        answer_unanswered_calls(tail, 0, "[not run: the turn was cut off before this tool finished]")
        added += tail[len(history) - last:]
    end = (history + added)[-1:]
    if end and (end[0].get("role") != "assistant" or end[0].get("tool_calls")):
        added.append({"role": "assistant", "content": CUT_OFF_NOTE})
    return added


def _check_name(name: str) -> str:
    name = str(name).strip()
    if not name or len(name) > 80 or any(c.isspace() for c in name):
        raise ValueError(f"invalid session name {name!r}: use 1-80 characters without spaces")
    return name
