"""The ACP host: one turn of an outside agent, run as a turn of ours.

``EngineHost.run`` emits the turn's events through the same emitter as the built-in harness
(stamped, masked, logged, shown), answers the agent's requests on the cell's thread
(``services.py``), and hands back a ``TurnResult``. It keeps one agent process per engine
and one ACP session per notebook session, so the agent's conversation continues across
cells; ``new_session=True`` starts a fresh one. A replay feeds a recording's updates
through the same mapping with no process at all.

Caps: the turn's timeout and Ctrl-C send ``session/cancel``; an agent that does not answer
the prompt within ``CANCEL_GRACE_S`` is ended (the next turn starts it again and loads its
session where the agent offers ``session/load``). Cost and token caps apply where the agent
reports usage (``usage_update``); otherwise the result says so (``caps_note``).
"""

from __future__ import annotations

import queue
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agent.callbacks import AgentCallbacks
from ..agent.events import ErrorEvent, EventLog, StepEnd, StepStart, TurnEnd, TurnStart
from ..agent.loop.emitter import EventEmitter
from ..agent.redact import Redactor, redact_value
from ..agent.results import StepRecord, TurnResult
from .commands import EngineSpec, require_installed
from .connection import AgentCrashed, AgentProcess, Inbound
from .kernel_mcp import KernelMCPServer
from .recording import EngineRecording
from .services import KernelTool, Services, write_file
from .updates import STEP, UpdateMapper

CANCEL_GRACE_S = 5.0
POLL_S = 0.05
_STOP_STATUS = {"end_turn": "completed", "max_tokens": "completed", "max_turn_requests": "max_steps",
                "refusal": "refused", "cancelled": "interrupted"}


@dataclass
class EngineTurn:
    """What one turn needs; ``replay`` set: answered from it, nothing started."""

    spec: EngineSpec
    prompt: str
    session: str  # the notebook's session name (the agent's session is kept per name)
    permission: str = "ask"
    approver: Callable[[Any, Any, Any], Any] | None = None
    approval_timeout_s: float = 0.0
    timeout_s: float = 120.0
    event_log: EventLog | None = None
    on_event: Callable[[Any], Any] | None = None
    redact: Callable[[str], str] | None = None
    kernel_tool: KernelTool | None = None
    new_session: bool = False
    replay: EngineRecording | None = None
    cell: str = ""  # the recording's key (the cell's source)
    cell_id: str = ""  # the cell as the front-end names it (else its source): a re-run replaces its turn
    max_cost: float | None = None
    max_tokens: int | None = None


@dataclass
class EngineOutcome:
    result: TurnResult
    recording: EngineRecording
    caps_note: str = ""  # the caps asked for could not apply (no usage reported)


@dataclass
class EngineHost:
    """A kernel's outside agents: processes by engine, ACP sessions by (engine, session)."""

    workspace: Path
    env: dict[str, str] = field(default_factory=dict)
    processes: dict[str, AgentProcess] = field(default_factory=dict)
    sessions: dict[tuple[str, str], str] = field(default_factory=dict)
    # per agent session: the cell of its last turn and a fork of the session from before it
    # (None: it was the first turn), so re-running that cell starts from there
    last_turn: dict[tuple[str, str], tuple[str, str | None]] = field(default_factory=dict)
    kernel_server: KernelMCPServer | None = None

    def run(self, turn: EngineTurn) -> EngineOutcome:
        if turn.replay is None:
            require_installed(turn.spec)  # EngineNotFound: one line, before anything is shown
        redact = turn.redact or Redactor()  # known key formats, the environment's keys
        emitter = EventEmitter(session_id=turn.session, turn_id=uuid.uuid4().hex[:12], event_log=turn.event_log,
                               callbacks=AgentCallbacks(), redact=redact, extra=turn.on_event)
        return _Run(self, turn, emitter).run()

    def process(self, spec: EngineSpec) -> tuple[AgentProcess, bool]:
        """The engine's process, started if needed (True: it is new)."""
        current = self.processes.get(spec.name)
        if current is not None and current.alive:
            return current, False
        if current is not None:
            current.close()
        process = AgentProcess(spec, self.workspace, self.env)
        self.processes[spec.name] = process
        try:
            process.start()
        except BaseException:
            process.close()
            self.processes.pop(spec.name, None)
            raise
        return process, True

    def agent_name(self, spec: EngineSpec) -> str:
        """The agent as it names itself (``Claude Code 0.16.2``), once it has started; else the engine's name."""
        process = self.processes.get(spec.name)
        info = process.info.agent_info if process is not None and process.info is not None else None
        return f"{info.title or info.name} {info.version}".strip() if info is not None else spec.name

    def mcp_servers(self, with_kernel: bool) -> list[dict[str, Any]]:
        if not with_kernel:
            return []
        if self.kernel_server is None:
            self.kernel_server = KernelMCPServer()
        return [self.kernel_server.acp_entry()]

    def close(self) -> None:
        for process in self.processes.values():
            process.close()
        self.processes.clear()
        if self.kernel_server is not None:
            self.kernel_server.close()
            self.kernel_server = None


class _Run:
    def __init__(self, host: EngineHost, turn: EngineTurn, emit: EventEmitter) -> None:
        self.host, self.turn, self.emit = host, turn, emit
        self.mapper = UpdateMapper()
        self.services = Services(turn.permission, turn.approver, emit, turn.kernel_tool, turn.approval_timeout_s)
        self.order: list[dict[str, Any]] = []  # the recording's items, in the order they happened
        self.over_budget = False
        self.status, self.error, self.stop_reason = "completed", "", ""
        self.started = time.monotonic()

    def run(self) -> EngineOutcome:
        t = self.turn
        crashed = ""
        if t.replay is None:
            try:  # started first, so the turn's header names the agent as it names itself
                self.process, self.fresh = self.host.process(t.spec)
            except AgentCrashed as exc:
                crashed = str(exc)
        self.emit(TurnStart(user_message=t.prompt, provider="acp", model=self.host.agent_name(t.spec),
                            timeout_s=t.timeout_s))
        self.emit(StepStart(step=STEP))
        try:
            if crashed:
                raise AgentCrashed(crashed)
            if t.replay is not None:
                self._replay(t.replay)
            else:
                self._live()
        except AgentCrashed as exc:
            self._fail(str(exc))
        except KeyboardInterrupt:
            self.status = "interrupted"
        for event in self.mapper.unfinished():
            self.emit(event)
        self.emit(StepEnd(step=STEP, stop_reason=self.stop_reason, tool_calls=len(self.mapper.calls)))
        duration = time.monotonic() - self.started
        text = self.mapper.text
        self.emit(TurnEnd(status=self.status, text=text, steps=1, tool_calls=len(self.mapper.calls),
                          duration_ms=duration * 1000))
        result = TurnResult(
            session_id=t.session, turn_id=self.emit.turn_id, status=self.status, text=text,
            duration_s=duration, error=self.error or None, tool_calls=self.mapper.records(),
            steps=[StepRecord(step=STEP, text=text, thinking=self.mapper.thinking, stop_reason=self.stop_reason,
                              tool_calls=list(self.mapper.calls))],
            providers_used=[f"acp:{t.spec.name}"], replay="replayed" if t.replay is not None else "live")
        redact = self.emit.redact or (lambda text: text)  # the saved recording is masked as the log is
        recording = t.replay or EngineRecording(cell=t.cell, engine=t.spec.name, prompt=t.prompt,
                                                items=redact_value(self.order, redact), stop_reason=self.stop_reason)
        note = ""
        unenforced = [flag for flag, wanted, reported in (
            ("--max-cost", t.max_cost, "cost" in self.mapper.usage), ("--max-tokens-total", t.max_tokens, False))
            if wanted and not reported]
        if unenforced and t.replay is None:  # usage_update's "used" is the context's size, not what was spent
            note = (f"note: {t.spec.name} reports no usage over ACP that {' and '.join(unenforced)} could cap, "
                    "so they do not apply to its turns (--timeout and Ctrl-C do)")
        return EngineOutcome(result, recording, note)

    # -- live --------------------------------------------------------------------
    def _live(self) -> None:
        t, host = self.turn, self.host
        process, fresh = self.process, self.fresh
        key = (t.spec.name, t.session)
        mcp = host.mcp_servers(t.kernel_tool is not None)
        session_id = None if t.new_session else host.sessions.get(key)
        if session_id is not None and fresh:
            host.last_turn.pop(key, None)  # forks of the ended process: not reused
            if process.can_load():
                process.load_session(session_id, mcp)
            else:
                session_id = None
        session_id = self._place(process, key, session_id, mcp)
        if host.kernel_server is not None:
            host.kernel_server.route(process.inbox)
        try:
            self._prompt(process, session_id)
        finally:
            if host.kernel_server is not None:
                host.kernel_server.route(None)

    def _place(self, process: AgentProcess, key: tuple[str, str], session_id: str | None, mcp: list[Any]) -> str:
        """The session this turn runs in: a fork of the state it starts from, which is kept, so
        re-running the session's last cell runs again from that state (its earlier turn is
        replaced, also in the agent's memory); a fresh session for a first turn. (claude-code-acp
        cannot fork a session that was never prompted, so the turn runs in the fork.)"""
        host, cell = self.host, self.turn.cell_id or self.turn.cell
        last = host.last_turn.pop(key, None) if session_id is not None else None
        base = last[1] if last is not None and last[0] == cell else session_id
        run_in: str | None = None
        if base is not None:
            if process.can_fork():
                try:
                    run_in = process.fork_session(base, mcp)
                except AgentCrashed:
                    run_in, cell = base, ""  # no state to come back to: a re-run continues the session
            else:
                run_in, cell = base, ""
        if run_in is None:
            run_in = process.new_session(mcp)
        host.sessions[key] = run_in
        if cell:
            host.last_turn[key] = (cell, base)
        return run_in

    def _prompt(self, process: AgentProcess, session_id: str) -> None:
        t = self.turn
        pending = process.prompt(session_id, t.prompt)
        cancelled_at: float | None = None
        while True:
            try:
                deadline = self.started + t.timeout_s + self.services.waited_s  # the user's time is not the agent's
                if cancelled_at is None and (self.over_budget or time.monotonic() > deadline):
                    self.status, cancelled_at = "budget" if self.over_budget else "timeout", time.monotonic()
                    process.cancel(session_id)
                if cancelled_at is not None and time.monotonic() - cancelled_at > CANCEL_GRACE_S:
                    process.stop()  # it did not stop: end it (the next turn loads the session again)
                    self.stop_reason = "killed"
                    return
                try:
                    item = process.inbox.get(timeout=POLL_S)
                except queue.Empty:
                    if pending.done():
                        break
                    continue
                self._handle(item, session_id)
            except KeyboardInterrupt:
                if cancelled_at is None:
                    self.status, cancelled_at = "interrupted", time.monotonic()
                    process.cancel(session_id)
                else:  # a second Ctrl-C: end it now
                    process.stop()
                    self.stop_reason = "killed"
                    return
        response = pending.result()  # AgentCrashed from here
        self.stop_reason = str(getattr(response, "stop_reason", "") or "")
        if cancelled_at is None:
            self.status = _STOP_STATUS.get(self.stop_reason, "completed")

    def _handle(self, item: Inbound, session_id: str) -> None:
        if item.kind == "update":
            if item.session_id == session_id:
                self._update(item.data)
            return
        answer: Any
        if item.kind == "permission":
            call = item.data.setdefault("toolCall", {})
            for name, value in self.mapper.known(str(call.get("toolCallId") or "")).items():
                if not call.get(name):
                    call[name] = value
            answer = self.services.permission_request(item.data)
        elif item.kind == "write":
            answer = self.services.write(item.data)
        else:
            answer = self.services.kernel(item.data)
        if item.reply is not None and not item.reply.done():
            item.reply.set_result(answer)
        self.order.extend(self.services.items)
        self.services.items.clear()

    def _map(self, update: dict[str, Any]) -> dict[str, Any]:
        """Mask keys first: the answer, the tool rows, ``_agent`` and the recording never hold one."""
        if self.emit.redact is not None:
            update = redact_value(update, self.emit.redact)
        for event in self.mapper.map(update):
            self.emit(event)
        return update

    def _update(self, update: dict[str, Any]) -> None:
        self.order.append({"kind": "update", "update": self._map(update)})
        cost = (self.mapper.usage.get("cost") or {}).get("amount") if self.mapper.usage else None
        if self.turn.max_cost and isinstance(cost, (int, float)) and cost > self.turn.max_cost:
            self.over_budget = True  # _prompt cancels the turn

    def _fail(self, message: str) -> None:
        self.status, self.error = "error", message
        self.emit(ErrorEvent(step=STEP, kind="engine", message=message, recoverable=False))
        process = self.host.processes.get(self.turn.spec.name)
        if process is not None and not process.alive:  # an agent that answered with an error stays
            self.host.processes.pop(self.turn.spec.name, None)
            process.close()

    # -- replay ------------------------------------------------------------------
    def _replay(self, recording: EngineRecording) -> None:
        self.order = list(recording.items)
        for item in recording.items:
            kind = item.get("kind")
            if kind == "update":
                self._map(item.get("update") or {})
            elif kind == "kernel" and self.turn.kernel_tool is not None:
                self.turn.kernel_tool(str(item.get("tool")), item.get("arguments") or {})
            elif kind == "write" and item.get("path"):
                write_file(str(item["path"]), str(item.get("content") or ""))
        self.stop_reason = recording.stop_reason
        self.status = _STOP_STATUS.get(self.stop_reason, "completed")

