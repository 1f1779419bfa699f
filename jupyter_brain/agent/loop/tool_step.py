"""The tool half of a step: the model's calls through the executor, as events and records.

Approvals are observed here (an ``ApprovalRequest`` before the user is asked, an
``ApprovalDecision`` after, and the turn's deadline moved by the time the user took);
the executor decides what a failing approver means. A Ctrl-C while tools run is a
returned value carrying the calls that did finish, whose results go to the history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...foundation.interrupts import INTERRUPTS, is_interrupt
from ...providers.base import ToolCall
from ..budget import TurnBudget
from ..callbacks import AgentCallbacks
from ..events import ApprovalDecision, ApprovalRequest, ToolCallArgs, ToolCallEnd, ToolCallStart
from ..executor import Approval, BoundedToolExecutor, ToolOutcome, ToolTurnState
from ..images import view_images
from ..results import ToolCallRecord
from ..thinking import ThinkingManager
from ..tool_context import ChargeUsage, ToolContext
from ..tools import ToolSpec

Emit = Callable[[Any], None]

_DECIDED_BY = ("user", "timeout", "no_frontend", "policy", "error")
RESULT_PREVIEW_CHARS = 2000


@dataclass
class ToolStepOutcome:
    outcomes: list[ToolOutcome] = field(default_factory=list)  # finished calls, in call order
    interrupted: bool = False  # Ctrl-C: ``outcomes`` holds only those that finished


class ApprovalEvents:
    """The executor's approval observer for one step: events, and the deadline moved."""

    def __init__(self, step: int, emit: Emit, budget: TurnBudget, timeout_s: float) -> None:
        self.step = step
        self.emit = emit
        self.budget = budget
        self.timeout_s = timeout_s

    def requested(self, call: ToolCall, spec: ToolSpec, arguments: Any) -> None:
        preview = None
        make_preview = spec.metadata.get("preview") if spec is not None else None
        if make_preview is not None:
            try:
                preview = make_preview(arguments if isinstance(arguments, dict) else {})
            except Exception as exc:  # noqa: BLE001 - e.g. the file vanished: still ask
                preview = {"error": f"no preview: {exc}"}
        self.emit(ApprovalRequest(step=self.step, call_id=call.id, name=call.name,
                                  effect=getattr(spec, "effect", "execute"), arguments=arguments,
                                  preview=preview, timeout_s=self.timeout_s))

    def decided(self, call: ToolCall, answer: Approval, waited_s: float) -> None:
        self.budget.extend(waited_s)  # the user's time is not the agent's
        self.emit(ApprovalDecision(step=self.step, call_id=call.id, approved=answer.approved,
                                   by=answer.by if answer.by in _DECIDED_BY else "user",
                                   channel=answer.channel, waited_ms=waited_s * 1000))


@dataclass
class ToolStep:
    """Runs one step's calls; records land in ``records``, errors reach ``thinking``."""

    executor: BoundedToolExecutor
    state: ToolTurnState
    records: list[ToolCallRecord]
    announced: set[str]
    thinking: ThinkingManager
    callbacks: AgentCallbacks
    emit: Emit
    approval_timeout_s: float = 0.0
    charge_usage: ChargeUsage | None = None  # a tool's own model usage (MCP sampling), into the turn

    def run(self, calls: list[ToolCall], step: int, budget: TurnBudget,
            cancelled: Callable[[], bool]) -> ToolStepOutcome:
        emit = self.emit
        finished: list[ToolOutcome] = []

        def on_start(call: ToolCall, wave: int, args: Any, repaired: bool, notes: list[str]) -> None:
            if call.id not in self.announced:
                emit(ToolCallStart(step=step, call_id=call.id, name=call.name))
                self.announced.add(call.id)
            emit(ToolCallArgs(step=step, call_id=call.id, name=call.name, arguments=args, wave=wave,
                              repaired=repaired))
            self.callbacks.fire("on_tool_start", call.name, args)

        def on_end(outcome: ToolOutcome) -> None:
            finished.append(outcome)
            images = view_images(outcome.images, self.executor.artifacts) if outcome.images else []
            event = ToolCallEnd(
                step=step, call_id=outcome.call.id, name=outcome.call.name, status=outcome.status,
                duration_ms=outcome.duration_ms, wave=outcome.wave,
                result_preview=preview_of(outcome.output), artifact=outcome.artifact,
                error=outcome.error, images=images, outputs=outcome.outputs,
            )
            emit(event)
            self.callbacks.fire("on_tool_end", event)
            if outcome.status in ("error", "timeout", "invalid"):
                self.thinking.on_tool_error(f"{outcome.call.name}: {outcome.error or outcome.output[:200]}")
            self.records.append(ToolCallRecord(
                call_id=outcome.call.id, name=outcome.call.name, arguments=outcome.arguments,
                status=outcome.status, output=outcome.output, duration_ms=outcome.duration_ms,
                wave=outcome.wave, step=step, artifact=outcome.artifact, error=outcome.error, images=images,
            ))

        try:
            outcomes = self.executor.execute(
                calls, self.state, remaining_s=budget.remaining_s, on_start=on_start, on_end=on_end,
                cancelled=cancelled, approvals=ApprovalEvents(step, emit, budget, self.approval_timeout_s),
                tool_context=lambda call: ToolContext(call.id, step=step, emit=emit, charge_usage=self.charge_usage,
                                                      user_waited=budget.extend),
            )
        except INTERRUPTS as exc:  # Ctrl-C, also while a record's validator was being built
            if not is_interrupt(exc):
                raise
            return ToolStepOutcome(finished, interrupted=True)
        return ToolStepOutcome(outcomes)


def preview_of(text: str, limit: int = RESULT_PREVIEW_CHARS) -> str:
    """A tool result as the views show it: whole, or cut at the last line end (else the last
    space) before ``limit`` characters, with a ``…`` that says it goes on; never mid-word."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = head.rfind("\n")
    if cut < limit // 2:
        cut = head.rfind(" ")
    return (head[:cut] if cut > limit // 2 else head).rstrip() + " …"
