"""Turn: one user message answered — its state, its steps, and how it ends.

The loop is bounded by ``max_steps`` model calls and a ``timeout_s`` deadline. Each step
fits the request into the context budget, calls the model (``model_stream``, tried again
by ``retry``), runs the tools it asked for (``tool_step``) and may reflect. Whatever ends
the turn (an answer, a limit, a provider error, a cancel or Ctrl-C), ``_finish`` leaves a
history that is valid to continue from: every tool call has its result and the last
message is the assistant's.

The hooks (``agent/hooks.py``) are called at their fixed points, through one dispatcher;
the loop knows no integration by name, and takes everything else from its ``TurnSetup``.
"""

from __future__ import annotations

import threading
import time
from functools import partial
from typing import Any

from ...foundation.interrupts import is_interrupt
from ...providers.base import ProviderError, ProviderResult, Usage
from ...providers.capabilities import has_native_thinking
from ...providers.chain import provider_label
from ..budget import TurnBudget
from ..context.fitting import ContextFitter
from ..context.summary import summary_request
from ..events import (
    ErrorEvent,
    ReflectionEvent,
    StepEnd,
    StepStart,
    ToolCallEnd,
    TurnEnd,
    TurnStart,
    TurnStatus,
    UsageEvent,
)
from ..executor import ToolTurnState
from ..history import answer_unanswered_calls
from ..hooks import (
    Answer,
    CheckedProvider,
    HistoryView,
    HookDispatcher,
    ModelRequest,
    Sources,
    Spent,
    StopTurn,
    ToolOffer,
    TurnContext,
)
from ..redact import Redactor
from ..reflection import ReflectionResult
from ..request_snapshot import RequestCapture
from ..results import StepRecord, ToolCallRecord, TurnResult
from ..strategies.parser import final_answer
from ..tool_context import TurnEvents
from ..turn_options import TurnOptions
from .emitter import EventEmitter
from .ending import INTERRUPTED_TOOL_NOTE, explain_stop, join, refusal_answer
from .model_stream import ModelCall, ModelOutcome, StrategyFeed
from .retry import call_with_retries
from .setup import TurnSetup
from .tool_offer import turn_tools
from .tool_step import ToolStep
from .tool_usage import charge_side_usage, charge_tool_usage, spent

Message = dict[str, Any]


class Turn:
    """The state of one running turn. ``run`` drives it; the harness only builds it."""

    def __init__(self, setup: TurnSetup, session_id: str, turn_id: str, history: list[Message],
                 user_message: str, *, emit: EventEmitter, cancel: threading.Event | None,
                 persist_history: bool, options: TurnOptions | None = None) -> None:
        self.setup = setup
        self.settings = setup.settings
        self.provider = setup.provider
        self.session_id = session_id
        self.turn_id = turn_id
        self.emit = emit
        self.cancel = cancel
        self.history_log = setup.event_log if persist_history else None  # None: history not stored
        self.budget = TurnBudget(self.settings.timeout_s, self.settings.max_steps, self.settings.max_reflections)
        self.thinking = setup.thinking
        self.user_message = user_message
        self.options = options or TurnOptions()
        self.user_msg: Message = {"role": "user", "content": user_message}  # compaction never drops it
        self.messages: list[Message] = [*history, self.user_msg]
        self.first_new = len(history)
        self.persisted = len(history)  # messages[:persisted] are in the event log
        self._prompt_at = len(history)  # where user_msg was last seen (see _index_of_prompt)
        self.status: TurnStatus = "completed"
        self.final_text = self.raw_text = ""
        self.error: str | None = None
        self.step = 0
        self.totals: dict[str, int] = dict.fromkeys(Usage.model_fields, 0)  # the turn's Usage, as ints
        self.usage_estimated = False  # any call's usage was counted locally (Usage.estimated)
        self.cost: float | None = 0.0
        self._usage_lock = threading.Lock()  # tools charge usage from their threads
        self._charge_tool_usage = partial(charge_tool_usage, self)  # (ToolContext.usage)
        self.side_tokens = 0  # tokens of the hooks' own calls (charge_usage), not in ``totals``
        self.stop_message: str | None = None  # a hook's StopTurn: the turn's final text
        self.steps: list[StepRecord] = []
        self.tool_calls: list[ToolCallRecord] = []
        self.reflections: list[ReflectionResult] = []
        self.strategy_steps: list[Any] = []
        self.stub_reflections: set[str] = set()
        self.announced: set[str] = set()  # tool call ids whose ToolCallStart was emitted
        self.tool_state = ToolTurnState()
        self.native_thinking = has_native_thinking(setup.provider)  # fixed for the turn
        self.system_prompt = setup.system_prompt
        self.provenance = setup.provenance
        self.providers_used: list[str] = []
        self.last_request: list[Message] = []  # the last request built (for %agent inspect)
        # The hooks: one dispatcher, the turn's data and services as their context.
        self.sources = Sources()
        self.ctx = self._context()
        self.hooks = HookDispatcher(setup.integrations, self.ctx, lambda: self.step)
        emit.observers, emit.observer_failed = self.hooks.event_observers(), self.hooks.event_failed
        # The tools: selected now; deferred ones loaded on request (tool_offer.py).
        s, executor = self.settings, setup.executor
        offer = self.hooks.prepare_tools(ToolOffer(registry=frozenset(executor.registry.names())))
        self.tool_state.blocked.update(offer.blocked)  # called anyway: refused by the executor
        self.offer = turn_tools(s, executor.registry, offer, history, user_message)  # deferred: find_tools
        self.tool_schemas = self.offer.schemas
        self.ctx.tools_offered[:] = [str(schema.get("name", "")) for schema in self.tool_schemas]
        self.fitter = ContextFitter(
            counter=setup.counter, tracker=setup.context, compaction=s.compactor, budget_tokens=setup.context_budget,
            target=s.compaction_target, auto_compact=s.auto_compact, provider=setup.provider,
            tool_schemas=self.tool_schemas, workspace=setup.workspace,
        )
        self.tools = ToolStep(executor.with_tools(self.offer.specs), self.tool_state, self.tool_calls, self.announced,
                              self.thinking, setup.callbacks, emit, setup.approval_timeout_s,
                              charge_usage=self._charge_tool_usage)

    def _context(self) -> TurnContext:
        """What the hooks see of this turn: its facts and a few services, never the turn."""
        setup, s = self.setup, self.settings
        provider = setup.provider
        strategy = s.reasoning_strategy
        return TurnContext(
            session_id=self.session_id, turn_id=self.turn_id, user_message=self.user_message,
            options=self.options, provider=provider, provider_name=str(getattr(provider, "name", "") or ""),
            model=str(getattr(provider, "model", "") or ""), agent_id=s.agent_id,
            working_directory=s.working_directory, think_level=s.level.value,
            strategy=strategy.name if strategy is not None else None, max_steps=s.max_steps,
            timeout_s=s.timeout_s, run_context=dict(setup.run_context),
            prompt=self.provenance.as_dict(), workspace=setup.workspace, sources=self.sources,
            tools_offered=[], emit=self.emit, charge_usage=self._charge_usage, record=self._record,
            time_left=self.budget.remaining_s, redact=self._clean, add_tool_call=self.tool_calls.append,
            spent=self._spent, check_call=lambda request: self.hooks.before_model_call(request),
        )

    # the loop ------------------------------------------------------------------------
    def run(self) -> TurnResult:
        started = time.perf_counter()
        self.thinking.on_turn_start()
        with TurnEvents.enter(self.emit, self._charge_tool_usage):  # what arrives outside tool calls
            try:
                self._announce()
                self.hooks.turn_start()
                self.fitter.layers = self.hooks.context_layers()
                while self._next_step():
                    pass
            except StopTurn as stop:  # a hook ended the turn (a budget cap …): its status, its words
                self.status, self.stop_message = stop.status, stop.message  # type: ignore[assignment]
            except ProviderError as exc:
                self.status, self.error = "error", str(exc)
                self.emit(ErrorEvent(step=self.step, kind=exc.kind, message=self._clean(str(exc)), recoverable=False))
            except KeyboardInterrupt:  # between calls: what finished is already in self.messages
                self.status = "interrupted"
            except Exception as exc:  # noqa: BLE001 - a bug must still leave a usable session
                if is_interrupt(exc):  # Ctrl-C while a validator was being built (foundation/interrupts.py)
                    self.status = "interrupted"
                else:
                    self.status, self.error = "error", f"{type(exc).__name__}: {exc}"
                    self.emit(ErrorEvent(step=self.step, kind="internal", message=self._clean(self.error),
                                         recoverable=False))
        self.fitter.settle()  # a request sent before it was counted is counted now (fitting.py)
        return self._finish(time.perf_counter() - started)

    def _announce(self) -> None:
        s, provider = self.settings, self.provider
        strategy = s.reasoning_strategy
        self.emit(TurnStart(
            user_message=self.user_message, provider=getattr(provider, "name", ""),
            model=getattr(provider, "model", "") or "", think_level=s.level.value,
            strategy=strategy.name if strategy else None, max_steps=s.max_steps, timeout_s=s.timeout_s,
            reflect_every=s.reflect_every, prompt=self.provenance.as_dict() or None,
            run_context=self.setup.run_context or None,
        ))

    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def _next_step(self) -> bool:
        """One step; False when the turn is over (``status`` says why)."""
        if self._cancelled():
            self.status = "interrupted"
            return False
        if self.budget.is_expired():
            self.status = "timeout"
            return False
        if not self.budget.claim_step():
            self.status = "max_steps"
            return False
        step = self.step = self.budget.steps
        self.emit(StepStart(step=step))
        self.setup.callbacks.fire("on_step", step)
        rewritten = self.hooks.process_history(
            HistoryView(self.messages, step, self._index_of_prompt(len(self.messages) - 1)))
        if rewritten is not None:
            self._replace_history(rewritten)
        if (loaded := self.offer.refresh(self.messages)) is not None:  # deferred tools asked for
            self.tool_schemas = self.fitter.tool_schemas = loaded
            self.ctx.tools_offered[:] = [str(schema.get("name", "")) for schema in loaded]
        request = self.last_request = self._fit(step)
        outcome = self._call_model(request, step)
        if outcome.result is None:  # Ctrl-C, a cancel or the deadline mid-call
            self.status = "interrupted" if (outcome.interrupted or self._cancelled()) else "timeout"
            if outcome.partial:
                self.messages.append({"role": "assistant", "content": outcome.partial})
            return False
        result = outcome.result
        if result.stop_reason == "refusal":
            self.status, result = "refused", refusal_answer(result)
        try:
            result = self.hooks.after_model_call(step, result)
        except StopTurn:  # the call was made: its usage and cost are the turn's all the same
            self._add_usage(result.usage)
            raise
        self.messages.append(result.to_message())
        self._record_step(result, step)
        # Stated uncertainty only matters while the model can still act on it.
        self.thinking.on_step(result.text if result.tool_calls else "")
        if result.tool_calls:
            ran = self.tools.run(result.tool_calls, step, self.budget, self._cancelled)
            self.messages.extend(o.to_message() for o in ran.outcomes)
            if ran.interrupted:
                self.status = "interrupted"
                return False
        self._maybe_reflect(step)
        if self.history_log is not None:
            # Committed together with the StepEnd below: one transaction per step.
            self.history_log.append_messages(self.session_id, self.turn_id, self.messages[self.persisted:])
            self.persisted = len(self.messages)
        self.emit(StepEnd(step=step, stop_reason=result.stop_reason, tool_calls=len(result.tool_calls),
                          stop_reason_inferred=result.stop_reason_inferred))
        if not result.tool_calls:
            self.raw_text = result.text  # the answer as written; final_text: without the strategy's labels
            self.final_text = (result.refusal or result.text) if self.status == "refused" else \
                final_answer(result.text, self.settings.reasoning_strategy)
            return False
        strategy = self.settings.reasoning_strategy
        if strategy is not None and strategy.limit_reached(self.strategy_steps, step):
            self.status = "strategy_limit"
            return False
        return True

    def _replace_history(self, messages: list[Message]) -> None:
        """A hook rewrote the history: it replaces the stored one, as a compaction does."""
        self.messages[:] = messages
        self.fitter.recount()
        if self.history_log is not None:
            self.history_log.replace_history(self.session_id, self.messages)
        self.persisted = len(self.messages)

    def _fit(self, step: int) -> list[Message]:
        compacted, request = self.fitter.fit(
            self.messages, self.system_prompt, protect=self._index_of_prompt(len(self.messages) - 1),
            goal=self.user_message, summarize=lambda old: self._summarize(old), step=step, emit=self.emit,
        )
        if compacted:
            # The compacted history replaces the stored one (it is what the next cell
            # continues from); this turn's later messages append to it.
            if self.history_log is not None:
                self.history_log.replace_history(self.session_id, self.messages)
            self.persisted = len(self.messages)
        return request

    def _call_model(self, request: list[Message], step: int) -> ModelOutcome:
        """The step's model call, tried again after a transient failure (``retry.py``)."""
        return call_with_retries(
            lambda: self._model_call(request, step), self.setup.retry, step=step, emit=self.emit,
            stream=self.settings.stream, cancel=self.cancel, remaining_s=self.budget.remaining_s,
            strategy_steps=self.strategy_steps, announced=self.announced,
        )

    def _model_call(self, request: list[Message], step: int) -> ModelCall:
        native = self.native_thinking
        thinking_budget = self.settings.level.token_budget if native else 0
        call = self.hooks.before_model_call(  # each attempt
            ModelRequest(step, request, self.tool_schemas, thinking_budget=thinking_budget))
        return ModelCall(
            provider=self.provider, request=call.messages, tool_schemas=call.tool_schemas, step=step,
            emit=self.emit, callbacks=self.setup.callbacks,
            strategy=StrategyFeed(self.settings.reasoning_strategy, self.strategy_steps, step, self.emit),
            timeout_s=max(1.0, self.budget.remaining_s()),
            thinking_budget=thinking_budget,
            cancel=self.cancel, budget=self.budget,
            announced=self.announced,
        )

    # accounting ------------------------------------------------------------------------
    @property
    def usage(self) -> Usage:
        return Usage(**self.totals, estimated=self.usage_estimated)

    def _record_step(self, result: ProviderResult, step: int) -> None:
        usage = result.usage
        estimated = usage.estimated
        if not estimated:  # a local estimate must not calibrate the local counter
            self.fitter.observe(usage.total_input_tokens)
        fields = {name: getattr(usage, name) for name in self.totals}  # Usage's fields, read once
        cost = self._add_usage(usage, fields)  # priced as the provider that answered (a chain's active member)
        self.providers_used.append(provider_label(self.provider))  # who answered: a chain's active member
        self.steps.append(StepRecord(
            step=step, text=result.text, thinking="\n\n".join(b.text for b in result.thinking),
            tool_calls=[c.id for c in result.tool_calls], stop_reason=result.stop_reason, **fields,
            usage_estimated=estimated,
        ))
        self.emit(UsageEvent(step=step, **fields, cost_usd=cost, usage_estimated=estimated))

    def _add_usage(self, usage: Usage, fields: dict[str, int] | None = None) -> float | None:
        """Count a model call's usage (``fields``: its dump, when the caller has it) and cost
        into the turn; returns the call's cost."""
        totals = self.totals
        with self._usage_lock:
            for name in totals:
                totals[name] += fields[name] if fields is not None else getattr(usage, name)
            if getattr(usage, "estimated", False):
                self.usage_estimated = True
            cost = self.setup.price(usage, self.turn_id)
            self.cost = None if (cost is None or self.cost is None) else self.cost + cost
        return cost

    def _charge_usage(self, usage: Usage, *, provider: Any = None, thinking_phase: bool = False) -> float | None:
        return charge_side_usage(self, usage, provider=provider, thinking_phase=thinking_phase)

    def _spent(self) -> Spent:
        """What every model call of the turn used so far (``ctx.spent``)."""
        return spent(self)

    def _checked(self, purpose: str) -> CheckedProvider:
        """The turn's provider for a side call, seen by the hooks' ``before_model_call`` first."""
        return CheckedProvider(self.provider, self.ctx.check_call, purpose, lambda: self.step)

    def _record(self, kind: str, data: dict[str, Any]) -> None:
        """A hook's record beside the event log (none without a log)."""
        if self.setup.event_log is not None:
            self.setup.event_log.add_record(kind, data, session_id=self.session_id)

    def _summarize(self, old: list[Message]) -> str:
        """The compaction summary, written by the turn's own model (its cost is the turn's)."""
        timeout = max(1.0, min(60.0, self.budget.remaining_s()))
        result = self._checked("compaction").generate(summary_request(old), [], timeout_s=timeout)
        self._add_usage(result.usage)
        if not result.text.strip():
            raise ValueError("the model returned an empty summary")
        return result.text

    def _maybe_reflect(self, step: int) -> None:
        trigger = self.thinking.reflection_trigger()
        if trigger is None:
            return
        result = self.setup.reflection.reflect(self.messages, self.tool_state.results, self.budget,
                                               provider=self._checked("reflection"))
        result.trigger = trigger
        skipped = result.reflection.startswith("[") and result.reflection.endswith("]")
        if skipped:
            # A stub: show it once per kind, and clear the trigger so it does not repeat.
            self.thinking.record_reflection(result)
            if result.reflection in self.stub_reflections:
                return
            self.stub_reflections.add(result.reflection)
        else:
            self.reflections.append(result)
            if result.usage is not None:
                self._add_usage(result.usage)
        self.emit(ReflectionEvent(
            step=step, reflection=result.reflection, confidence=result.confidence, trigger=trigger,
            suggested_action=result.suggested_action, skipped=skipped,
        ))

    # the end -----------------------------------------------------------------------------
    def _finish(self, duration: float) -> TurnResult:
        emit, messages = self.emit, self.messages
        emit.closing = True
        first_new = self._index_of_prompt(self.first_new)
        for call in answer_unanswered_calls(messages, first_new, INTERRUPTED_TOOL_NOTE):
            emit(ToolCallEnd(step=self.step, call_id=call["id"], name=call["name"], status="interrupted",
                             error="the turn ended before this tool finished"))
        if self.status not in ("completed", "refused"):  # a refusal is its own answer
            # A hook's StopTurn says why in its own words; the loop's own stops in explain_stop's.
            self.final_text = (f"[{self._clean(self.stop_message)}]" if self.stop_message is not None else
                               explain_stop(self.status, self.settings, self._clean(self.error or "unknown error")))
            # Join an unfinished answer, unless it is already in the log (then add a message).
            last = messages[-1]
            if len(messages) > self.persisted and last.get("role") == "assistant" and not last.get("tool_calls"):
                messages[-1] = {**last, "content": join(last.get("content", ""), self.final_text)}
            else:
                messages.append({"role": "assistant", "content": self.final_text})
        if self.history_log is not None:
            self.history_log.append_messages(self.session_id, self.turn_id, messages[self.persisted:])
        answer = self.hooks.finish_answer(Answer(self.final_text, self.status, self.step, tuple(self.tool_calls)))
        self.final_text = answer.text
        extra = self.hooks.result_fields()
        totals = dict(self.totals)
        emit(TurnEnd(
            status=self.status, text=self.final_text, steps=len(self.steps), tool_calls=len(self.tool_calls),
            reflections=len(self.reflections), **totals, cost_usd=self.cost, duration_ms=duration * 1000,
            usage_estimated=self.usage_estimated, recorded=extra.get("recorded_usage"),
        ))
        fields: dict[str, Any] = dict(
            session_id=self.session_id, turn_id=self.turn_id, status=self.status, text=self.final_text,
            raw_text=self.raw_text or self.final_text, **totals, cost_usd=self.cost, usage_estimated=self.usage_estimated, duration_s=duration, steps=self.steps, tool_calls=self.tool_calls,
            reflections=self.reflections, strategy_steps=self.strategy_steps, messages=messages,
            new_messages=messages[first_new:], error=self.error, system_prompt=self.system_prompt,
            local_citations=self.sources.local, web_citations=self.sources.web,
            rendered_content_paths=self.sources.rendered_pages, context_pack_json=self.sources.context_pack,
            prompt_render_hash=self.provenance.prompt_render_hash or "",
            providers_used=self.providers_used,
        )
        result = TurnResult(**{**fields, **extra})  # the hooks' fields (memories, thinking phase …)
        self.hooks.close()
        result._request = self._capture_request()
        return result

    def _capture_request(self) -> RequestCapture | None:
        """The last request, kept by reference for ``TurnResult.request_snapshot()``."""
        if not self.last_request:
            return None
        provider = self.provider
        return RequestCapture(
            self.last_request, self.tool_schemas, self.setup.counter, self.setup.redactor or Redactor(),
            self.session_id, self.turn_id, self.step, getattr(provider, "name", "") or "",
            getattr(provider, "model", "") or "",
        )

    def _clean(self, text: str) -> str:
        redactor = self.setup.redactor
        return redactor(text) if redactor is not None else Redactor()(text)

    def _index_of_prompt(self, default: int) -> int:
        """Position of the turn's prompt (compaction moves it; it never replaces it).

        Where it was last seen is checked first: only a compaction moves it, so the scan
        (linear in the history) runs only after one.
        """
        messages, hint = self.messages, self._prompt_at
        if hint < len(messages) and messages[hint] is self.user_msg:
            return hint
        for i in range(len(messages) - 1, -1, -1):
            if messages[i] is self.user_msg:
                self._prompt_at = i
                return i
        return min(default, len(messages))

