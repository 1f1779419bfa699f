"""BoundedToolExecutor: runs the model's tool calls behind gates, with timeouts.

Order of gates for each call: unknown tool → blocked this turn → permission denied →
argument validation (with repair) → approval when the mode asks → run with a timeout on a
worker thread (or, for a tool marked ``inline``, on the caller's thread without one).
Whatever happens, the call ends as a ``ToolOutcome`` with text for the model: a tool
that raises, hangs or gets bad arguments never breaks the turn.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from ..providers.base import ToolCall
from .artifacts import ArtifactStore
from .images import ToolResult, model_images
from .repair import MALFORMED_JSON_NOTE, describe_validation_error, repair_arguments
from .tool_context import ToolContext
from .tool_workers import WAIT_SLICE_S
from .tool_workers import Run as _Run
from .tools import AgentToolRegistry, NonRetryableToolError, ToolError, ToolSpec, format_tool_output

MAX_REPAIR_ATTEMPTS = 3



@dataclass(frozen=True)
class Approval:
    """An approver's answer with its provenance, so the log and the model know why."""

    approved: bool
    by: str = "user"  # user | timeout | no_frontend | policy | error
    channel: str = ""  # widget | stdin | ...
    reason: str = ""

    @classmethod
    def of(cls, answer: Any) -> Approval:
        return answer if isinstance(answer, Approval) else cls(bool(answer))

    def denial_text(self) -> str:
        if self.reason:
            return self.reason
        return {
            "timeout": "the user did not answer before the approval timeout",
            "no_frontend": "there is no way to ask the user here (no widget front-end, no stdin)",
            "error": "the approval prompt failed",
            "policy": "the permission settings refuse it",
        }.get(self.by, "the user denied this call")


# approver(call, spec, arguments) -> True / Approval(approved=True, ...) to run the call
Approver = Callable[[ToolCall, ToolSpec, Any], "bool | Approval"]
# the ToolContext a call runs under (agent/tool_context.py); without one, a bare context
ContextFactory = Callable[[ToolCall], ToolContext]


class ApprovalObserver(Protocol):
    """Sees each approval the executor asks for (the harness turns them into events and
    moves the turn's deadline by the time the user took)."""

    def requested(self, call: ToolCall, spec: ToolSpec, arguments: Any) -> None: ...

    def decided(self, call: ToolCall, answer: Approval, waited_s: float) -> None: ...


@dataclass
class ToolOutcome:
    call: ToolCall
    status: str  # ToolStatus: ok | error | timeout | denied | blocked | invalid | interrupted | truncated
    output: str  # what the model reads
    wave: int = 0
    duration_ms: float = 0.0
    arguments: Any = None
    repaired: bool = False
    repair_notes: list[str] = field(default_factory=list)
    artifact: str | None = None
    error: str | None = None
    blocks_tool: bool = False  # a non-retryable failure: no more calls of this tool this turn
    images: list[dict[str, str]] = field(default_factory=list)  # {"media_type", "data"} for the model
    outputs: list[dict[str, str]] = field(default_factory=list)  # rich display outputs, for the views

    @property
    def is_error(self) -> bool:
        return self.status != "ok"

    def to_message(self) -> dict[str, Any]:
        message = {
            "role": "tool",
            "tool_call_id": self.call.id,
            "name": self.call.name,
            "content": self.output,
            "is_error": self.is_error,
        }
        if self.images:
            message["images"] = self.images
        return message


@dataclass
class ToolTurnState:
    """What the executor remembers within one turn."""

    blocked: dict[str, str] = field(default_factory=dict)  # tool -> reason
    invalid_attempts: dict[str, int] = field(default_factory=dict)
    results: list[dict[str, Any]] = field(default_factory=list)  # lightweight feed for reflection
    waves: int = 0




class BoundedToolExecutor:
    MAX_REPAIR_ATTEMPTS = MAX_REPAIR_ATTEMPTS

    def __init__(
        self,
        registry: AgentToolRegistry,
        *,
        artifacts: ArtifactStore | None = None,
        parallel_enabled: bool = True,
        enable_validation: bool = True,
        approver: Approver | None = None,
        output_limit: int = 12_000,
    ) -> None:
        self.registry = registry
        self.artifacts = artifacts or ArtifactStore()
        self.parallel_enabled = parallel_enabled
        self.enable_validation = enable_validation
        self.approver = approver
        self.output_limit = output_limit

    def with_tools(self, tools: Sequence[ToolSpec]) -> BoundedToolExecutor:
        """This executor, or for a turn with tools of its own a copy that runs them too."""
        if not tools:
            return self
        registry = self.registry.copy()
        for spec in tools:
            registry.register(spec)
        return BoundedToolExecutor(
            registry, artifacts=self.artifacts, parallel_enabled=self.parallel_enabled,
            enable_validation=self.enable_validation, approver=self.approver, output_limit=self.output_limit,
        )

    # planning -------------------------------------------------------------------
    def plan_waves(self, calls: list[ToolCall]) -> list[list[ToolCall]]:
        """Consecutive parallel-safe calls share a wave; any other call runs alone, in order."""
        return [[calls[i] for i in wave] for wave in self._plan(calls)]

    def _plan(self, calls: list[ToolCall]) -> list[list[int]]:
        waves: list[list[int]] = []
        last_safe = False
        for i, call in enumerate(calls):
            spec = self.registry.get(call.name)
            safe = self.parallel_enabled and spec is not None and spec.parallel_safe
            if safe and last_safe:
                waves[-1].append(i)
            else:
                waves.append([i])
            last_safe = safe
        return waves

    # running --------------------------------------------------------------------
    def execute(
        self,
        calls: list[ToolCall],
        state: ToolTurnState,
        *,
        remaining_s: Callable[[], float] = lambda: float("inf"),
        on_start: Callable[[ToolCall, int, Any, bool, list[str]], None] | None = None,
        on_end: Callable[[ToolOutcome], None] | None = None,
        cancelled: Callable[[], bool] = lambda: False,
        approvals: ApprovalObserver | None = None,
        tool_context: ContextFactory | None = None,
    ) -> list[ToolOutcome]:
        """Run all calls wave by wave; returns one outcome per call, in call order.
        ``tool_context`` makes each call's ``ToolContext`` (its progress, logs and usage)."""
        contexts: ContextFactory = tool_context or (lambda call: ToolContext(call.id))
        # Keyed by position, not by call id: ids from some servers repeat (or are empty).
        outcomes: dict[int, ToolOutcome] = {}
        for wave in self._plan(calls):
            state.waves += 1
            wave_no = state.waves
            if cancelled():
                for i in wave:
                    outcomes[i] = self._finish(
                        ToolOutcome(calls[i], "interrupted", "[not run: the turn was interrupted]", wave_no),
                        state, on_end,
                    )
                continue
            prepared = []
            for i in wave:
                call = calls[i]
                gate = self._gate(call, state, wave_no)
                if isinstance(gate, ToolOutcome):
                    if on_start:
                        on_start(call, wave_no, call.arguments, False, [])
                    outcomes[i] = self._finish(gate, state, on_end)
                else:
                    spec, validated, args, notes = gate
                    if on_start:
                        on_start(call, wave_no, args, bool(notes), notes)
                    prepared.append((i, (call, spec, validated, args, notes)))
            approved = []
            for i, item in prepared:
                call, spec, _, args, _ = item
                denial = self._approve(call, spec, args, wave_no, approvals)
                if denial is not None:
                    outcomes[i] = self._finish(denial, state, on_end)
                else:
                    approved.append((i, item))
            ran = self._run_wave([item for _, item in approved], wave_no, remaining_s, contexts)
            for (i, _), outcome in zip(approved, ran, strict=True):
                outcomes[i] = self._finish(outcome, state, on_end)
        return [outcomes[i] for i in range(len(calls))]

    def _gate(self, call: ToolCall, state: ToolTurnState, wave: int) -> ToolOutcome | tuple:
        if call.truncated:  # first: never repaired, approved or run, whatever the tool
            return truncated_outcome(call, wave)
        spec = self.registry.get(call.name)
        if spec is None:
            available = ", ".join(self.registry.names()) or "(none)"
            return ToolOutcome(call, "invalid", f"Unknown tool '{call.name}'. Available tools: {available}.",
                               wave, error="unknown tool")
        if call.name in state.blocked:
            return ToolOutcome(call, "blocked", f"Tool '{call.name}' is blocked for the rest of this turn: "
                               f"{state.blocked[call.name]}. Use another approach.", wave,
                               error="blocked")
        if self.registry.permission_for(call.name) == "deny":
            mode = self.registry.permission_mode.value
            return ToolOutcome(
                call, "denied",
                f"Permission denied: '{call.name}' {_effect_verb(spec)} and is not allowed in "
                f"permission mode '{mode}'. Do not retry it; continue without it or tell the user "
                "what you would need.", wave, error="permission denied")
        args: Any = call.arguments
        notes: list[str] = []
        if not self.enable_validation:
            return spec, spec.args_model.model_construct(**(args if isinstance(args, dict) else {})), args, notes
        try:
            if call.raw_arguments is not None:
                raise ValueError("malformed JSON")
            validated = spec.args_model.model_validate(args if args is not None else {})
            return spec, validated, args, notes
        except (ValidationError, ValueError):
            pass
        args, notes = repair_arguments(args, spec.args_model, call.raw_arguments)
        try:
            validated = spec.args_model.model_validate(args)
            return spec, validated, args, notes
        except ValidationError as exc:
            if call.raw_arguments is not None and MALFORMED_JSON_NOTE not in notes:
                message = (f"Invalid arguments for tool '{call.name}': the arguments were not valid JSON "
                           f"({call.raw_arguments[:200]!r}). Send a JSON object.")
            else:
                message = describe_validation_error(call.name, exc, spec.input_schema)
            count = state.invalid_attempts.get(call.name, 0) + 1
            state.invalid_attempts[call.name] = count
            if count >= self.MAX_REPAIR_ATTEMPTS:
                state.blocked[call.name] = f"{count} calls with invalid arguments"
                message += f"\nThe tool is now blocked for this turn after {count} invalid calls."
            return ToolOutcome(call, "invalid", message, wave, arguments=args, error="invalid arguments")

    def _approve(self, call: ToolCall, spec: ToolSpec, args: Any, wave: int,
                 observer: ApprovalObserver | None = None) -> ToolOutcome | None:
        """None to run the call, or its denial. The one place an approver's failure becomes
        a denial; KeyboardInterrupt (Ctrl-C while a card waits) passes through."""
        if self.registry.permission_for(call.name) != "ask":
            return None
        if self.approver is None:
            return ToolOutcome(
                call, "denied",
                f"'{call.name}' {_effect_verb(spec)} and needs the user's approval, but no approval "
                "channel is available. Continue without it, or tell the user to allow it.",
                wave, arguments=args, error="no approver")
        if observer is not None:
            observer.requested(call, spec, args)
        started = time.monotonic()
        try:
            answer = Approval.of(self.approver(call, spec, args))
        except Exception as exc:  # noqa: BLE001 - a broken approval prompt denies, never crashes
            answer = Approval(False, by="error", reason=f"approval failed: {exc}")
        if observer is not None:
            observer.decided(call, answer, time.monotonic() - started)
        if answer.approved:
            return None
        reason = answer.denial_text()
        return ToolOutcome(call, "denied", f"Denied: {reason}. Do not retry the same call; adjust your approach.",
                           wave, arguments=args, error="denied")

    def _run_wave(self, items: list[tuple], wave: int, remaining_s: Callable[[], float],
                  contexts: ContextFactory) -> list[ToolOutcome]:
        if not items:
            return []
        # Worker calls start first, so inline ones of the same wave run while they do.
        runs = []
        for call, spec, validated, args, notes in items:
            start = time.perf_counter()
            run = None if spec.inline else _Run(spec, validated, contexts(call)).start()
            runs.append((call, spec, validated, args, notes, run, start))
        outcomes = []
        try:
            for call, spec, validated, args, notes, run, start in runs:
                if run is None:
                    outcome = self._run_inline(call, spec, validated, wave, contexts(call))
                else:
                    outcome = self._await(call, spec, validated, run, start, wave, remaining_s, contexts)
                outcome.arguments, outcome.repaired, outcome.repair_notes = args, bool(notes), notes
                outcomes.append(outcome)
        except BaseException:  # Ctrl-C while waiting: the calls not yet settled are given up
            for *_, run, _start in runs[len(outcomes):]:
                if run is not None:
                    run.settle(abandoned=True)
            raise
        return outcomes

    def _run_inline(self, call: ToolCall, spec: ToolSpec, validated: Any, wave: int,
                    tool: ToolContext) -> ToolOutcome:
        """A tool marked ``inline`` (fast, cannot block) runs on this thread: no hand-off,
        and no timeout. Ctrl-C inside it propagates as while waiting for a worker; whatever
        else it raises is reported to the model as from a worker."""
        start = time.perf_counter()
        try:
            with tool.active():
                value = spec.invoke(validated)
        except KeyboardInterrupt:
            tool.cancel()
            raise
        except BaseException as exc:  # noqa: BLE001 - reported to the model
            return self._failure(call, exc, wave, (time.perf_counter() - start) * 1000)
        finally:
            tool.close()
        return self._returned(call, value, wave, (time.perf_counter() - start) * 1000)

    def _returned(self, call: ToolCall, value: Any, wave: int, duration: float) -> ToolOutcome:
        text = format_tool_output(value.text if isinstance(value, ToolResult) else value)
        shown, handle = self.artifacts.offload(text, self.output_limit)
        outputs = list(value.outputs) if isinstance(value, ToolResult) else []
        return ToolOutcome(call, "ok", shown, wave, duration, artifact=handle, images=model_images(value),
                           outputs=outputs)

    def _await(self, call, spec, validated, run: _Run, start: float, wave: int, remaining_s,
               contexts: ContextFactory) -> ToolOutcome:
        last = [run]  # the run being waited for (a retry's, after a first timeout)
        try:
            outcome = self._wait_for(call, spec, validated, last, start, wave, remaining_s, contexts)
        except BaseException:  # Ctrl-C while waiting
            last[0].settle(abandoned=True)
            raise
        last[0].settle(abandoned=outcome.status == "timeout")
        return outcome

    def _wait_for(self, call, spec, validated, last: list[_Run], start: float, wave: int, remaining_s,
                  contexts: ContextFactory) -> ToolOutcome:
        run = last[0]
        attempts = 1
        attempt_start = start  # calls of a wave run together: time each from its own start
        while True:
            left = run.tool.left_s(spec.timeout_s, time.perf_counter() - attempt_start)
            # While the user is being asked (None), neither the tool's clock nor the turn's runs.
            finished = run.wait(WAIT_SLICE_S if left is None else min(left, remaining_s()))
            if finished:
                break
            left = run.tool.left_s(spec.timeout_s, time.perf_counter() - attempt_start)
            if left is None or (left > 0 and remaining_s() > 0):
                continue  # the time went to the user, not to the tool
            if spec.retry_on_timeout and attempts == 1 and remaining_s() > 0:
                attempts += 1
                attempt_start = time.perf_counter()
                run.settle(abandoned=True)
                run = _Run(spec, validated, contexts(call)).start()
                last[0] = run
                continue
            duration = (time.perf_counter() - start) * 1000
            why = f"timed out after {spec.timeout_s:g}s" + (" (retried once)" if attempts > 1 else "")
            reason = why if remaining_s() > 0 else "the turn's deadline passed"
            return ToolOutcome(call, "timeout", f"Tool '{call.name}' {reason}. It is blocked for the rest of "
                               "this turn; try a cheaper approach.", wave, duration, error=reason)
        duration = (time.perf_counter() - start) * 1000
        if run.exc is not None:
            return self._failure(call, run.exc, wave, duration)
        return self._returned(call, run.value, wave, duration)

    def _failure(self, call: ToolCall, exc: BaseException, wave: int, duration: float) -> ToolOutcome:
        if isinstance(exc, ToolError):
            message = str(exc) or type(exc).__name__
        else:
            frames = traceback.extract_tb(exc.__traceback__)
            where = f" (at {frames[-1].name}, line {frames[-1].lineno})" if frames else ""
            message = f"{type(exc).__name__}: {exc}{where}"
        return ToolOutcome(call, "error", f"Tool '{call.name}' failed: {message}", wave, duration,
                           error=message, blocks_tool=isinstance(exc, NonRetryableToolError))

    def _finish(self, outcome: ToolOutcome, state: ToolTurnState, on_end) -> ToolOutcome:
        if outcome.status == "timeout" or outcome.blocks_tool:
            state.blocked.setdefault(outcome.call.name, outcome.error or outcome.status)
        state.results.append({"name": outcome.call.name, "status": outcome.status, "output": outcome.output[:500]})
        if on_end:
            on_end(outcome)
        return outcome


TRUNCATED_ARGS_SHOWN = 300


def truncated_outcome(call: ToolCall, wave: int) -> ToolOutcome:
    """A call the output limit cut off: not run; the model sees what arrived, clipped."""
    raw = call.raw_arguments or ""
    shown = raw if len(raw) <= TRUNCATED_ARGS_SHOWN else raw[:TRUNCATED_ARGS_SHOWN] + f"… ({len(raw)} chars)"
    message = (f"Not run: your call of '{call.name}' was cut off by the output token limit before its "
               f"arguments were complete (received: {shown!r}). Retry with a shorter call: split the work "
               "into smaller steps or write less per call.")
    return ToolOutcome(call, "truncated", message, wave, arguments=raw,
                       error="arguments cut off by the output limit; the call was not run")


def _effect_verb(spec: ToolSpec) -> str:
    return {"write": "writes files", "execute": "executes code"}.get(spec.effect, "reads data")
