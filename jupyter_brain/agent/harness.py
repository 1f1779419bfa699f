"""AgentHarness: one bounded agent turn — model calls, tools, reflection — as events.

The loop is bounded by ``max_steps`` model calls and a ``timeout_s`` deadline. Whatever
ends the turn (answer, limits, provider error, interrupt), the returned history is valid
to continue from: every tool call has its result and the last message is the
assistant's. The workspace context is rendered fresh for each request and never stored.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..providers.base import LLMProvider, ProviderError, ProviderResult, ToolCall, Usage
from .artifacts import ArtifactStore, artifact_tool
from .budget import TurnBudget
from .context import (
    CompactionResult,
    CompactionStrategy,
    ContextWarningTracker,
    TokenCounter,
    compaction_strategy,
    context_window_for,
    select_tools,
    summary_request,
)
from .callbacks import AgentCallbacks
from .cost import SessionCostTracker
from .events import (
    ApprovalDecision,
    ApprovalRequest,
    CompactionEvent,
    ContextWarning,
    ErrorEvent,
    EventBase,
    EventLog,
    ReflectionEvent,
    StepEnd,
    StepStart,
    StrategyStepEvent,
    TextDelta,
    ThinkingDelta,
    ThinkingEnd,
    ToolCallArgs,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    TurnEnd,
    TurnStart,
    TurnStatus,
    UsageEvent,
)
from .executor import Approval, Approver, BoundedToolExecutor, ToolOutcome, ToolTurnState
from .redact import Redactor, redact_value
from .reflection import ReflectionEngine, ReflectionResult
from .strategies import AnyStep, ReasoningStrategy, StrategyParser, StrategyPreset, resolve_strategy
from .thinking import ThinkingConfig, ThinkingManager, ThinkLevel
from .tools import AgentToolRegistry

SYSTEM_PROMPT = """You are jupyter-brain, an assistant that works inside the user's Jupyter kernel.
You can inspect the user's variables and files and, when permitted, run Python in their
kernel through tools. Prefer looking at the real data over guessing. Keep answers concise
and in Markdown; show small tables or numbers that support your answer. When a tool fails,
read the error and adjust instead of repeating the same call."""

TOOL_CALL_TIMEOUT_S = 45
TOOL_MESSAGE_MAX_CHARS = 12_000


class StepRecord(BaseModel):
    step: int
    text: str = ""
    thinking: str = ""
    tool_calls: list[str] = Field(default_factory=list)  # call ids
    stop_reason: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0


class ToolCallRecord(BaseModel):
    call_id: str
    name: str
    arguments: Any = None
    status: str
    output: str = ""
    duration_ms: float = 0.0
    wave: int = 0
    step: int = 0
    artifact: str | None = None
    error: str | None = None


class TurnResult(BaseModel):
    """What a turn produced, and the history to continue from (``messages``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    session_id: str
    turn_id: str
    status: TurnStatus
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float | None = None
    duration_s: float = 0.0
    steps: list[StepRecord] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    reflections: list[ReflectionResult] = Field(default_factory=list)
    strategy_steps: list[AnyStep] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    new_messages: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None
    system_prompt: str = ""  # as sent (base + strategy + thinking instructions)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return (
            f"TurnResult(status={self.status!r}, steps={len(self.steps)}, "
            f"tool_calls={len(self.tool_calls)}, text={_clip(self.text, 60)!r})"
        )

    @property
    def usage(self) -> Usage:
        return Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read_tokens,
            cache_creation_tokens=self.cache_creation_tokens,
        )


class _Emitter:
    """Stamps events with ids and order, then fans them out to log and callbacks."""

    def __init__(self, harness: AgentHarness, session_id: str, turn_id: str,
                 extra: Callable[[Any], Any] | None) -> None:
        self.log = harness.event_log
        self.callbacks = harness.callbacks
        self.session_id = session_id
        self.turn_id = turn_id
        self.extra = extra
        self.seq = 0
        self.closing = False  # the turn is ending: a Ctrl-C from a callback cannot stop it any more
        # Every consumer (log, widget, text, callbacks) gets the same masked event.
        self.redact = harness.redactor

    def __call__(self, event: EventBase) -> None:
        # Plain fields: set them directly (pydantic's __setattr__ costs ~1.5 µs each).
        event.__dict__.update(session_id=self.session_id, turn_id=self.turn_id, seq=self.seq)
        if self.redact is not None:
            _redact_fields(event, self.redact)
        self.seq += 1
        if self.log is not None:
            try:
                self.log.append(event)
            except Exception as exc:  # noqa: BLE001 - a full disk must not kill the turn
                import logging

                logging.getLogger("jupyter_brain.harness").error("event log write failed: %s", exc)
        self.callbacks.fire("on_event", event)
        if self.extra is not None:
            try:
                self.extra(event)
            except KeyboardInterrupt:
                if not (self.closing or event.type == "error"):
                    raise
            except Exception:  # noqa: BLE001
                import logging

                logging.getLogger("jupyter_brain.harness").exception("on_event callback failed")


_NOT_REDACTED = frozenset({"session_id", "turn_id", "seq", "ts", "type", "step", "call_id"})


def _redact_fields(event: EventBase, redact: Callable[[str], str]) -> None:
    """Mask secrets in an event's text fields in place (ids and numbers untouched)."""
    fields = event.__dict__
    for key, value in fields.items():
        if key in _NOT_REDACTED or value is None or isinstance(value, (int, float, bool)):
            continue
        masked = redact_value(value, redact)
        if masked is not value:
            fields[key] = masked


class _TurnState:
    def __init__(self) -> None:
        self.usage = Usage()
        self.cost: float | None = 0.0
        self.steps: list[StepRecord] = []
        self.tool_calls: list[ToolCallRecord] = []
        self.reflections: list[ReflectionResult] = []
        self.strategy_steps: list[Any] = []
        self.tools = ToolTurnState()
        self.stub_reflections: set[str] = set()
        self.announced: set[str] = set()  # tool call ids whose ToolCallStart was emitted
        self.tool_schemas: list[dict[str, Any]] = []  # fixed for the turn
        self.user_msg: dict[str, Any] = {}  # the turn's prompt; compaction never drops it
        self.last_request_estimate = 0  # calibrated tokens of the request about to be sent
        self.last_request_raw = 0  # the same in our tokenizer's units (for calibration)
        # Running token count of the history: messages are only appended during a turn
        # (a compaction resets it), so each request counts just what is new.
        self.counted_upto = 0
        self.counted_tokens = 0
        self.tools_tokens: int | None = None

    def add_cost(self, cost: float | None) -> None:
        self.cost = None if (cost is None or self.cost is None) else self.cost + cost


class AgentHarness:
    """Wires provider, tools, thinking, reflection, strategy and logging for one turn at a time."""

    def __init__(
        self,
        provider: LLMProvider,
        tools: AgentToolRegistry | None,
        event_log: EventLog | None,
        *,
        max_steps: int = 6,
        timeout_s: float = 60,
        think_level: ThinkLevel | str = ThinkLevel.OFF,
        reflect_every: int = 0,
        callbacks: AgentCallbacks | None = None,
        stream: bool = False,
        system_prompt: str | None = None,
        redact_logs: bool = False,
        cost_tracker: SessionCostTracker | None = None,
        checkpoint_store: Any = None,
        parallel_enabled: bool = True,
        enable_tool_validation: bool = True,
        enable_semantic_selection: bool = False,
        max_tools_per_turn: int = 25,
        auto_compact: bool = True,
        compaction: CompactionStrategy | str = "summary",
        context_budget: int | None = None,
        context_window: int | None = None,
        compaction_target: float = 0.6,
        token_counter: TokenCounter | None = None,
        strategy: ReasoningStrategy | StrategyPreset | str | None = None,
        workspace: Callable[[], str] | None = None,
        approver: Approver | None = None,
        artifacts: ArtifactStore | None = None,
        max_reflections: int = 4,
        reflect_on_tool_error: bool = True,
        reflect_on_uncertainty: bool = True,
        agent_id: str = "jupyter-brain",
        working_directory: str = ".",
        secrets: tuple[str, ...] = (),
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self.provider = provider
        self.tools = tools if tools is not None else AgentToolRegistry()
        self.event_log = event_log
        self.max_steps = int(max_steps)
        self.timeout_s = float(timeout_s)
        self.think_level = ThinkLevel.from_string(think_level)
        self.reflect_every = int(reflect_every)
        self.callbacks = callbacks or AgentCallbacks()
        self.stream = stream
        self.system_prompt = system_prompt
        self.redact_logs = redact_logs
        self.cost_tracker = cost_tracker
        self.checkpoint_store = checkpoint_store
        self.parallel_enabled = parallel_enabled
        self.enable_tool_validation = enable_tool_validation
        self.enable_semantic_selection = enable_semantic_selection
        self.max_tools_per_turn = max_tools_per_turn
        self.auto_compact = auto_compact
        self.compaction = compaction_strategy(compaction) if isinstance(compaction, str) else compaction
        if not 0 < compaction_target < 1:
            raise ValueError("compaction_target must be between 0 and 1 (a share of the context budget)")
        self.compaction_target = float(compaction_target)
        self.counter = token_counter or TokenCounter()
        self.context_window = int(context_window or context_window_for(getattr(provider, "model", None)))
        if context_budget is not None and context_budget < 1_000:
            raise ValueError("context_budget must be at least 1,000 tokens")
        # The budget is the window the tracker measures against: requests stay under its
        # critical share; compaction brings them down to compaction_target of it.
        self.context_budget = int(min(context_budget or self.context_window, self.context_window))
        self.context = ContextWarningTracker(self.context_budget)
        self.compactions = 0
        self.strategy = resolve_strategy(strategy)
        self.workspace = workspace
        self.max_reflections = max_reflections
        self.agent_id = agent_id
        self.working_directory = working_directory
        self.redactor = Redactor(secrets) if redact_logs else None
        if self.redactor is not None and event_log is not None and event_log._redact is None:
            event_log._redact = self.redactor
        self.artifacts = artifacts or ArtifactStore()
        if "read_artifact" not in self.tools:
            self.tools.register(artifact_tool(self.artifacts))
        self._thinking = ThinkingManager(
            ThinkingConfig(
                level=self.think_level,
                reflect_every=self.reflect_every,
                reflect_on_tool_error=reflect_on_tool_error,
                reflect_on_uncertainty=reflect_on_uncertainty,
            )
        )
        self._turn_lock = threading.Lock()
        self.approver = approver
        self._turn_ctx: tuple[Any, TurnBudget] | None = None  # (emit, budget) of the running turn
        self._step = 0
        self._reflection_engine = ReflectionEngine(provider, self._thinking, self.callbacks)
        self._executor = BoundedToolExecutor(
            self.tools,
            artifacts=self.artifacts,
            parallel_enabled=parallel_enabled,
            enable_validation=enable_tool_validation,
            approver=self._approve if approver is not None else None,
            output_limit=TOOL_MESSAGE_MAX_CHARS,
        )

    # public -----------------------------------------------------------------------
    @property
    def thinking(self) -> ThinkingManager:
        return self._thinking

    def build_system_prompt(self) -> str:
        base = self.system_prompt or SYSTEM_PROMPT
        if self.strategy is not None:
            base = f"{base}\n\n{self.strategy.system_prompt(self.agent_id, self.working_directory)}"
        native = bool(getattr(self.provider, "supports_native_thinking", False))
        return self._thinking.get_thinking_prompt(base, native=native)

    def run_turn(
        self,
        session_id: str,
        history: list[dict[str, Any]],
        user_message: str,
        *,
        turn_id: str | None = None,
        on_event: Callable[[Any], Any] | None = None,
        cancel: threading.Event | None = None,
        persist_history: bool = True,
    ) -> TurnResult:
        """Run one turn. Never raises for model, tool or interrupt failures: see ``status``.

        Turns on one harness run one at a time (the thinking state is per harness); use
        one harness per concurrent conversation.
        """
        with self._turn_lock:
            return self._run_turn(session_id, history, user_message, turn_id=turn_id,
                                  on_event=on_event, cancel=cancel, persist_history=persist_history)

    def _run_turn(self, session_id, history, user_message, *, turn_id, on_event, cancel, persist_history) -> TurnResult:
        turn_id = turn_id or uuid.uuid4().hex[:12]
        if self.checkpoint_store is not None:
            self.checkpoint_store.begin_turn(session_id, turn_id)
        emit = _Emitter(self, session_id, turn_id, on_event)
        budget = TurnBudget(self.timeout_s, self.max_steps, self.max_reflections)
        state = _TurnState()
        state.tool_schemas = self._select_tools(history, user_message)
        self._thinking.on_turn_start()
        started = time.perf_counter()
        user_msg = {"role": "user", "content": user_message}
        state.user_msg = user_msg
        messages: list[dict[str, Any]] = [*history, user_msg]
        first_new = len(history)
        persisted = first_new
        system_prompt = self.build_system_prompt()
        strategy_name = self.strategy.name if self.strategy else None
        status: TurnStatus = "completed"
        final_text = ""
        error: str | None = None
        step = 0
        self._turn_ctx = (emit, budget)
        try:
            emit(TurnStart(
                user_message=user_message, provider=getattr(self.provider, "name", ""),
                model=getattr(self.provider, "model", "") or "", think_level=self.think_level.value,
                strategy=strategy_name, max_steps=self.max_steps, timeout_s=self.timeout_s,
                reflect_every=self.reflect_every,
            ))
            while True:
                if cancel is not None and cancel.is_set():
                    status = "interrupted"
                    break
                if budget.is_expired():
                    status = "timeout"
                    break
                if not budget.claim_step():
                    status = "max_steps"
                    break
                step = self._step = budget.steps
                emit(StepStart(step=step))
                self.callbacks.fire("on_step", step)
                compacted, request = self._fit_context(messages, system_prompt, step, budget, state, emit)
                if compacted:
                    # The compacted history replaces the stored one (it is what the next
                    # cell continues from); this turn's later messages append to it.
                    if persist_history and self.event_log is not None:
                        self.event_log.replace_history(session_id, messages)
                    persisted = len(messages)
                result, partial = self._call_model(request, step, budget, state, emit, cancel)
                if result is None:  # interrupted or timed out mid-stream
                    status = "interrupted" if (cancel is not None and cancel.is_set()) else "timeout"
                    if partial:
                        messages.append({"role": "assistant", "content": partial})
                    break
                messages.append(result.to_message())
                self._record_step(result, step, state, emit)
                # Stated uncertainty only matters while the model can still act on it.
                self._thinking.on_step(result.text if result.tool_calls else "")
                if result.tool_calls:
                    outcomes = self._run_tools(result.tool_calls, step, budget, state, emit, cancel)
                    messages.extend(o.to_message() for o in outcomes)
                self._maybe_reflect(messages, step, budget, state, emit)
                if persist_history and self.event_log is not None:
                    # Committed together with the StepEnd below: one transaction per step.
                    self.event_log.append_messages(session_id, turn_id, messages[persisted:])
                    persisted = len(messages)
                emit(StepEnd(step=step, stop_reason=result.stop_reason, tool_calls=len(result.tool_calls)))
                if not result.tool_calls:
                    final_text = result.text
                    break
                if self.strategy is not None and self.strategy.limit_reached(state.strategy_steps, step):
                    status = "strategy_limit"
                    break
        except ProviderError as exc:
            status, error = "error", str(exc)
            emit(ErrorEvent(step=step, kind=exc.kind, message=self._clean(str(exc)), recoverable=False))
        except KeyboardInterrupt as exc:
            status = "interrupted"
            messages.extend(o.to_message() for o in getattr(exc, "finished", ()))
            partial = getattr(exc, "partial", "")
            if partial:
                messages.append({"role": "assistant", "content": partial})
        except Exception as exc:  # noqa: BLE001 - a bug must still leave a usable session
            status, error = "error", f"{type(exc).__name__}: {exc}"
            emit(ErrorEvent(step=step, kind="internal", message=self._clean(error), recoverable=False))

        self._turn_ctx = None
        emit.closing = True
        first_new = _index_of(messages, user_msg, first_new)
        for call in _close_dangling_tool_calls(messages, first_new):
            emit(ToolCallEnd(step=step, call_id=call["id"], name=call["name"], status="interrupted",
                             error="the turn ended before this tool finished"))
        if status != "completed":
            final_text = self._explain_stop(status, error)
            # Join an unfinished answer, unless it is already in the log (then add a message).
            if (len(messages) > persisted and messages[-1].get("role") == "assistant"
                    and not messages[-1].get("tool_calls")):
                messages[-1] = {**messages[-1], "content": _join(messages[-1].get("content", ""), final_text)}
            else:
                messages.append({"role": "assistant", "content": final_text})
        if persist_history and self.event_log is not None:
            self.event_log.append_messages(session_id, turn_id, messages[persisted:])
        duration = time.perf_counter() - started
        emit(TurnEnd(
            status=status, text=final_text, steps=len(state.steps), tool_calls=len(state.tool_calls),
            reflections=len(state.reflections), input_tokens=state.usage.input_tokens,
            output_tokens=state.usage.output_tokens, cache_read_tokens=state.usage.cache_read_tokens,
            cache_creation_tokens=state.usage.cache_creation_tokens, cost_usd=state.cost,
            duration_ms=duration * 1000,
        ))
        return TurnResult(
            session_id=session_id, turn_id=turn_id, status=status, text=final_text,
            input_tokens=state.usage.input_tokens, output_tokens=state.usage.output_tokens,
            cache_read_tokens=state.usage.cache_read_tokens,
            cache_creation_tokens=state.usage.cache_creation_tokens, cost_usd=state.cost,
            duration_s=duration, steps=state.steps, tool_calls=state.tool_calls,
            reflections=state.reflections, strategy_steps=state.strategy_steps,
            messages=messages, new_messages=messages[first_new:], error=error,
            system_prompt=system_prompt,
        )

    # context ---------------------------------------------------------------------
    def _select_tools(self, history: list[dict[str, Any]], user_message: str) -> list[dict[str, Any]]:
        """All tool schemas, or with semantic selection on and a large registry, the most
        relevant ones (plus any the conversation already used)."""
        schemas = self.tools.schemas()
        if not self.enable_semantic_selection or len(schemas) <= self.max_tools_per_turn:
            return schemas
        used = {c.get("name") for m in history for c in (m.get("tool_calls") or [])}
        recent = " ".join(str(m.get("content", "")) for m in history[-4:] if m.get("role") in ("user", "assistant"))
        return select_tools(schemas, f"{user_message} {recent}", self.max_tools_per_turn,
                            always={*used, "read_artifact"})

    def _fit_context(self, messages, system_prompt, step, budget, state, emit) -> tuple[bool, list[dict[str, Any]]]:
        """Build and measure the next request; at the critical level compact the history
        in place and rebuild it.

        Returns (whether ``messages`` was rewritten, the request to send). Level changes
        and compactions are events. A compaction that cannot get under the budget still
        sends what it has. The workspace renders once per request.
        """
        request = self._request(messages, system_prompt)
        state.last_request_raw = self._count(request, messages, state)
        tokens = state.last_request_estimate = self.counter.calibrated(state.last_request_raw)
        if self.auto_compact and tokens >= self.context.critical_tokens:
            tokens = self._confirm_count(request, state, tokens)
        change = self.context.update(tokens)
        if not self.auto_compact or tokens < self.context.critical_tokens:
            self._emit_level(change, step, emit)
            return False, request
        overhead = state.last_request_raw - state.counted_tokens  # system part + tool schemas
        protect = _index_of(messages, state.user_msg, len(messages) - 1)
        result: CompactionResult = self.compaction.compact(
            messages, budget_tokens=int(self.context_budget * self.compaction_target), counter=self.counter,
            protect_from=protect, goal=str(state.user_msg.get("content", "")),
            summarize=lambda old: self._summarize(old, budget, state, emit, step), overhead_tokens=overhead,
        )
        if not result.changed:
            self._emit_level(change, step, emit)
            return False, request
        messages[:] = result.messages
        state.counted_upto = state.counted_tokens = 0
        system_part = [m for m in request if m.get("role") == "system"]
        self.compactions += 1
        emit(CompactionEvent(
            step=step, strategy=result.strategy, tokens_before=result.tokens_before,
            tokens_after=result.tokens_after, messages_before=result.messages_before,
            messages_after=result.messages_after, budget_tokens=self.context_budget, fallback=result.fallback,
        ))
        request = system_part + messages  # same system prompt and workspace render
        state.last_request_raw = self._count(request, messages, state)
        tokens = state.last_request_estimate = self.counter.calibrated(state.last_request_raw)
        # The compaction event tells the story; a level event only for a net change from
        # where the context stood before this request.
        after = self.context.update(tokens)
        before = change.previous if change is not None else (after.previous if after is not None else None)
        if before is not None and before != self.context.level:
            emit(ContextWarning(step=step, level=self.context.level, previous=before, tokens=tokens,
                                window=self.context_budget))
        return True, request

    def _count(self, request, messages, state) -> int:
        """Raw tokens of ``request`` (its system part + ``messages``) plus the tool schemas."""
        if state.counted_upto > len(messages):
            state.counted_upto = state.counted_tokens = 0
        count = self.counter.count_message
        for message in messages[state.counted_upto:]:
            state.counted_tokens += count(message)
        state.counted_upto = len(messages)
        if state.tools_tokens is None:
            state.tools_tokens = self.counter.count_tools(state.tool_schemas)
        system = sum(count(m) for m in request[: len(request) - len(messages)])
        return system + state.counted_tokens + state.tools_tokens

    def _confirm_count(self, request, state, estimate: int) -> int:
        """Before compacting on an estimate, ask the provider for its exact count where it
        offers one (Anthropic's count endpoint), and learn from the answer."""
        exact_count = getattr(self.provider, "exact_input_tokens", None)
        if exact_count is None:
            return estimate
        try:
            exact = exact_count(request, state.tool_schemas)
        except Exception:  # noqa: BLE001 - counting must never break the turn
            return estimate
        if not exact:
            return estimate
        self.counter.observe(state.last_request_raw, exact)
        state.last_request_estimate = exact
        return exact

    def _emit_level(self, change, step: int, emit) -> None:
        if change is not None:
            emit(ContextWarning(step=step, level=change.level, previous=change.previous, tokens=change.tokens,
                                window=change.window))

    def _summarize(self, old: list[dict[str, Any]], budget: TurnBudget, state, emit, step: int) -> str:
        """The compaction summary, written by the turn's own model (its cost is the turn's)."""
        timeout = max(1.0, min(60.0, budget.remaining_s()))
        result = self.provider.generate(summary_request(old), [], timeout_s=timeout)
        state.usage = state.usage + result.usage
        state.add_cost(self._cost(result.usage, emit.turn_id))
        if not result.text.strip():
            raise ValueError("the model returned an empty summary")
        return result.text

    # model calls -----------------------------------------------------------------
    def _request(self, messages: list[dict[str, Any]], system_prompt: str) -> list[dict[str, Any]]:
        request = [{"role": "system", "content": system_prompt}]
        if self.workspace is not None:
            try:
                context = self.workspace()
            except Exception as exc:  # noqa: BLE001
                context = f"(workspace context unavailable: {exc})"
            if context:
                request.append({"role": "system", "content": context, "kind": "workspace"})
        return request + messages

    def _call_model(self, request, step, budget, state, emit, cancel):
        """One model call. Returns (result, None), or (None, partial_text) when cut short."""
        tool_schemas = state.tool_schemas
        native = bool(getattr(self.provider, "supports_native_thinking", False))
        thinking_budget = self.think_level.token_budget if native else 0
        parser = self.strategy.parser() if self.strategy is not None else None
        timeout = max(1.0, budget.remaining_s())
        if not self.stream:
            result = self.provider.generate(request, tool_schemas, timeout_s=timeout, thinking_budget=thinking_budget)
            shown = ""
            try:
                for block in result.thinking:
                    if block.text:
                        emit(ThinkingDelta(step=step, text=block.text))
                        emit(ThinkingEnd(step=step))
                if result.text:
                    shown = result.text
                    emit(TextDelta(step=step, text=result.text))
                    self.callbacks.fire("on_stream_chunk", result.text)
                self._parse_strategy(parser, result.text, step, state, emit, final=True)
            except KeyboardInterrupt:  # as when streaming: the text the user saw stays
                raise _InterruptedMidStream(shown) from None
            return result, None
        stream = self.provider.generate_stream(request, tool_schemas, timeout_s=timeout, thinking_budget=thinking_budget)
        partial: list[str] = []
        thinking_open = False
        try:
            for ev in stream:
                if (cancel is not None and cancel.is_set()) or budget.is_expired():
                    if thinking_open:
                        emit(ThinkingEnd(step=step))
                    self._parse_strategy(parser, "", step, state, emit, final=True)
                    return None, "".join(partial)
                kind = ev.type
                if kind == "text":
                    if thinking_open:
                        emit(ThinkingEnd(step=step))
                        thinking_open = False
                    partial.append(ev.text)
                    emit(TextDelta(step=step, text=ev.text))
                    self.callbacks.fire("on_stream_chunk", ev.text)
                    self._parse_strategy(parser, ev.text, step, state, emit)
                elif kind == "thinking":
                    thinking_open = True
                    emit(ThinkingDelta(step=step, text=ev.text))
                elif kind == "thinking_end":
                    if thinking_open:
                        emit(ThinkingEnd(step=step))
                    thinking_open = False
                elif kind == "tool_call_start":
                    if thinking_open:
                        emit(ThinkingEnd(step=step))
                        thinking_open = False
                    call_id = ev.tool_call_id or f"idx{ev.index}"
                    state.announced.add(call_id)
                    emit(ToolCallStart(step=step, call_id=call_id, name=ev.name or "?"))
                elif kind == "tool_call_args":
                    emit(ToolCallArgsDelta(step=step, call_id=ev.tool_call_id or f"idx{ev.index}", delta=ev.text))
                elif kind == "done" and ev.result is not None:
                    if thinking_open:
                        emit(ThinkingEnd(step=step))
                    self._parse_strategy(parser, "", step, state, emit, final=True)
                    return ev.result, None
        except KeyboardInterrupt:
            if thinking_open:
                emit(ThinkingEnd(step=step))
            raise _InterruptedMidStream("".join(partial)) from None
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:  # noqa: BLE001
                    pass
        raise ProviderError("the stream ended without a final result", kind="stream",
                            provider=getattr(self.provider, "name", None))

    def _parse_strategy(self, parser: StrategyParser | None, text: str, step: int, state, emit, final: bool = False) -> None:
        if parser is None:
            return
        steps = parser.feed(text) if text else []
        if final:
            steps += parser.finish()
        for s in steps:
            state.strategy_steps.append(s)
            emit(StrategyStepEvent(step=step, strategy=self.strategy.name, data=s.model_dump()))

    def _record_step(self, result: ProviderResult, step: int, state: _TurnState, emit) -> None:
        usage = result.usage
        if usage.total_input_tokens > 0 and state.last_request_raw > 0:
            # The provider's own count of the request we estimated: later estimates follow it.
            self.counter.observe(state.last_request_raw, usage.total_input_tokens)
        state.usage = state.usage + usage
        cost = self._cost(usage, emit.turn_id)
        state.add_cost(cost)
        state.steps.append(StepRecord(
            step=step, text=result.text, thinking="\n\n".join(b.text for b in result.thinking),
            tool_calls=[c.id for c in result.tool_calls], stop_reason=result.stop_reason,
            **usage.model_dump(),
        ))
        emit(UsageEvent(step=step, **usage.model_dump(), cost_usd=cost))

    def _cost(self, usage: Usage, turn_id: str) -> float | None:
        model = getattr(self.provider, "model", None)
        provider = getattr(self.provider, "name", None)
        if self.cost_tracker is not None:
            return self.cost_tracker.record(turn_id, usage, model, provider)
        return SessionCostTracker().cost_of(usage, model, provider)

    # tools -----------------------------------------------------------------------
    def _run_tools(self, calls: list[ToolCall], step: int, budget: TurnBudget, state: _TurnState, emit, cancel) -> list[ToolOutcome]:
        def on_start(call: ToolCall, wave: int, args: Any, repaired: bool, notes: list[str]) -> None:
            if call.id not in state.announced:
                emit(ToolCallStart(step=step, call_id=call.id, name=call.name))
                state.announced.add(call.id)
            emit(ToolCallArgs(step=step, call_id=call.id, name=call.name, arguments=args, wave=wave, repaired=repaired))
            self.callbacks.fire("on_tool_start", call.name, args)

        finished: list[ToolOutcome] = []

        def on_end(outcome: ToolOutcome) -> None:
            finished.append(outcome)
            event = ToolCallEnd(
                step=step, call_id=outcome.call.id, name=outcome.call.name, status=outcome.status,
                duration_ms=outcome.duration_ms, wave=outcome.wave,
                result_preview=outcome.output[:2000], artifact=outcome.artifact, error=outcome.error,
            )
            emit(event)
            self.callbacks.fire("on_tool_end", event)
            if outcome.status in ("error", "timeout", "invalid"):
                self._thinking.on_tool_error(f"{outcome.call.name}: {outcome.error or outcome.output[:200]}")
            state.tool_calls.append(ToolCallRecord(
                call_id=outcome.call.id, name=outcome.call.name, arguments=outcome.arguments,
                status=outcome.status, output=outcome.output, duration_ms=outcome.duration_ms,
                wave=outcome.wave, step=step, artifact=outcome.artifact, error=outcome.error,
            ))

        try:
            return self._executor.execute(
                calls, state.tools, remaining_s=budget.remaining_s, on_start=on_start, on_end=on_end,
                cancelled=lambda: cancel is not None and cancel.is_set(),
            )
        except KeyboardInterrupt as exc:
            exc.finished = finished  # type: ignore[attr-defined] - their results go to the history
            raise

    def _approve(self, call: ToolCall, spec: Any, arguments: Any) -> Approval:
        """Ask the user's approver, with the request and the decision as events.

        The wait does not count against the turn's time limit (the deadline moves by it).
        KeyboardInterrupt (Ctrl-C while the card waits) passes through: it ends the turn.
        """
        emit, budget = self._turn_ctx if self._turn_ctx is not None else (None, None)
        preview = None
        make_preview = spec.metadata.get("preview") if spec is not None else None
        if make_preview is not None:
            try:
                preview = make_preview(arguments if isinstance(arguments, dict) else {})
            except Exception as exc:  # noqa: BLE001 - e.g. the file vanished: still ask
                preview = {"error": f"no preview: {exc}"}
        timeout = float(getattr(self.approver, "timeout_s", 0) or 0)
        if emit is not None:
            emit(ApprovalRequest(step=self._step, call_id=call.id, name=call.name,
                                 effect=getattr(spec, "effect", "execute"), arguments=arguments,
                                 preview=preview, timeout_s=timeout))
        started = time.monotonic()
        try:
            answer = Approval.of(self.approver(call, spec, arguments))
        except Exception as exc:  # noqa: BLE001
            answer = Approval(False, by="error", reason=f"approval failed: {exc}")
        waited = time.monotonic() - started
        if budget is not None:
            budget.extend(waited)
        if emit is not None:
            emit(ApprovalDecision(step=self._step, call_id=call.id, approved=answer.approved,
                                  by=answer.by if answer.by in ("user", "timeout", "no_frontend", "policy", "error") else "user",
                                  channel=answer.channel, waited_ms=waited * 1000))
        return answer

    # reflection -------------------------------------------------------------------
    def _maybe_reflect(self, messages, step: int, budget: TurnBudget, state: _TurnState, emit) -> None:
        trigger = self._thinking.reflection_trigger()
        if trigger is None:
            return
        result = self._reflection_engine.reflect(messages, state.tools.results, budget)
        result.trigger = trigger
        skipped = result.reflection.startswith("[") and result.reflection.endswith("]")
        if skipped:
            # A stub: show it once per kind, and clear the trigger so it does not repeat.
            self._thinking.record_reflection(result)
            if result.reflection in state.stub_reflections:
                return
            state.stub_reflections.add(result.reflection)
        else:
            state.reflections.append(result)
            if result.usage is not None:
                state.usage = state.usage + result.usage
                state.add_cost(self._cost(result.usage, emit.turn_id))
        emit(ReflectionEvent(
            step=step, reflection=result.reflection, confidence=result.confidence,
            trigger=trigger,
            suggested_action=result.suggested_action, skipped=skipped,
        ))

    # endings -----------------------------------------------------------------------
    def _explain_stop(self, status: str, error: str | None) -> str:
        """The explicit final message of a turn that did not end with an answer."""
        if status == "max_steps":
            why = (f"I stopped after {self.max_steps} steps, the step limit for this turn, before reaching a "
                   "final answer. The history is kept: continue in a new cell, or allow more steps "
                   "(--max-steps).")
        elif status == "timeout":
            why = (f"I stopped because the turn reached its {self.timeout_s:g}s time limit before a final "
                   "answer. The history is kept: continue in a new cell, or allow more time (--timeout).")
        elif status == "strategy_limit":
            name = self.strategy.name if self.strategy else "strategy"
            why = (f"I stopped because the {name} strategy reached its own step or reflection limit. "
                   "The history is kept: continue in a new cell.")
        elif status == "interrupted":
            why = "The turn was interrupted. The history is kept and the session is ready for the next cell."
        else:
            why = (f"The turn stopped because of an error: {self._clean(error or 'unknown error')}. "
                   "The history is kept and the session is ready for the next cell.")
        return f"[{why}]"

    def _clean(self, text: str) -> str:
        return self.redactor(text) if self.redactor is not None else Redactor()(text)


class _InterruptedMidStream(KeyboardInterrupt):
    """A KeyboardInterrupt that remembers the text streamed before it."""

    def __init__(self, partial: str) -> None:
        super().__init__()
        self.partial = partial


def _close_dangling_tool_calls(messages: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    """Give every tool call of this turn a result, so the history stays valid for the API.

    Returns the calls that had none (they were cut off by an interrupt or an error).
    """
    filled: list[dict[str, Any]] = []
    answered = {m.get("tool_call_id") for m in messages[start:] if m.get("role") == "tool"}
    i = start
    while i < len(messages):
        msg = messages[i]
        if msg.get("role") == "assistant" and msg.get("tool_calls"):
            missing = [c for c in msg["tool_calls"] if c["id"] not in answered]
            j = i + 1
            while j < len(messages) and messages[j].get("role") == "tool":
                j += 1
            filler = [
                {"role": "tool", "tool_call_id": c["id"], "name": c["name"],
                 "content": "[not run: the turn was interrupted before this tool finished]", "is_error": True}
                for c in missing
            ]
            messages[j:j] = filler
            answered.update(c["id"] for c in missing)
            filled.extend(missing)
            i = j + len(filler)
        else:
            i += 1
    return filled


def _index_of(messages: list[dict[str, Any]], message: dict[str, Any], default: int) -> int:
    """Position of this very message object (compaction moves it; it never replaces it)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i] is message:
            return i
    return min(default, len(messages))


def _join(a: str, b: str) -> str:
    return f"{a}\n\n{b}" if a else b


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
