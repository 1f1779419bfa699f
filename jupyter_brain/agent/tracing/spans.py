"""TurnTracer: one turn's events as OpenTelemetry spans.

``jupyter_brain.agent.turn`` (TurnStart → TurnEnd) is the parent of one span per
``jupyter_brain.agent.llm`` model call (from the turn's mark just before the call to its
usage), ``jupyter_brain.agent.tool`` call (its arguments and result, redacted),
``jupyter_brain.agent.reflect``, ``jupyter_brain.agent.thinking`` (a thinking phase) and
``jupyter_brain.agent.compact``. The events are the only input (the emitter hands them
over already stamped and, with ``redact_logs``, masked), and their timestamps are the
spans' times: a span whose work no event opens (a tool run, a reflection, a compaction)
starts where the event before it left off. Model calls follow the GenAI semantic
conventions (``gen_ai.*``); Phoenix's OpenInference kinds, ``session.id`` and a tool's
``input.value``/``output.value`` ride along (tests/phoenix reads them back from Phoenix).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from ...providers.chain import split_provider_label
from ..hooks import ModelRequest, TurnContext, TurnHook
from .attributes import PREFIX, Redact, clean, provenance_attributes, run_context_attributes

log = logging.getLogger("jupyter_brain.tracing")

TURN_SPAN = "jupyter_brain.agent.turn"
LLM_SPAN = "jupyter_brain.agent.llm"
TOOL_SPAN = "jupyter_brain.agent.tool"
REFLECT_SPAN = "jupyter_brain.agent.reflect"
COMPACT_SPAN = "jupyter_brain.agent.compact"
THINKING_SPAN = "jupyter_brain.agent.thinking"
OPENINFERENCE_KIND = "openinference.span.kind"
MAX_TOOL_TEXT = 8_000  # a tool's arguments or result on its span, in characters (the rest is cut)


def _ns(ts: float) -> int:
    return int(ts * 1_000_000_000)


def _capped(text: str) -> str:
    return text if len(text) <= MAX_TOOL_TEXT else text[:MAX_TOOL_TEXT] + f"… [{len(text) - MAX_TOOL_TEXT} more characters]"


def _arguments_json(arguments: Any) -> str:
    if isinstance(arguments, str):
        return _capped(arguments)
    return _capped(json.dumps(arguments, default=str, ensure_ascii=False, sort_keys=True))


class TurnTracer(TurnHook):
    """Consumes one turn's events (``on_event``) and the model-call mark (``mark``); a
    ``TurnHook`` (the tracing integration's), so each event comes here directly.

    Never raises: a failure is logged once and ends the tracing of this turn only.
    """

    def __init__(self, tracer: Any, redact: Redact, *, agent_name: str = "") -> None:
        self.tracer = tracer
        self.redact = redact
        self.agent_name = agent_name
        self.turn: Span | None = None
        self.context: Context | None = None
        self.model_attributes: dict[str, Any] = {}  # provider, model, conversation: on every llm span
        self.llm: Span | None = None
        self.llm_start = 0
        self.llm_end: int | None = None  # when the call's usage arrived (the span ends at StepEnd)
        self.llm_step = 0
        self.attempt = 0
        self.step = 0
        self.step_ns = 0
        self.last_ns = 0  # the previous event's time
        self.prepared_ns = 0  # the last event that prepared a wave of tool calls
        self.tool_args: dict[str, int] = {}
        self.tool_arguments: dict[str, str] = {}  # each call's arguments (JSON), for its span
        self.approvals: dict[str, dict[str, Any]] = {}
        self.server_calls: set[str] = set()  # calls the provider ran on its servers (server tools)
        self.error: str | None = None
        self.failed = False

    name = "tracing"
    logger = "jupyter_brain.tracing"

    # inputs --------------------------------------------------------------------------
    def on_event(self, ctx: TurnContext | None, event: Any) -> None:
        if self.failed:
            return
        ns = _ns(event.ts)
        handler = _HANDLERS.get(getattr(event, "type", ""))
        if handler is not None and (self.turn is not None or handler is TurnTracer._turn_start):
            self._guarded(handler, event, ns)
        self.last_ns = max(self.last_ns, ns)

    def before_model_call(self, ctx: TurnContext, request: ModelRequest) -> ModelRequest:
        if request.purpose == "step":  # side calls (compaction, reflection …) have spans of their own
            self.mark("llm", request.step)  # the call (this attempt) begins: its span's start
        return request

    def mark(self, name: str, step: int) -> None:
        """A moment no event marks: ``"llm"``, a model call begins now."""
        if not self.failed and name == "llm" and self.turn is not None:
            self._guarded(TurnTracer._mark_llm, step, time.time_ns())

    def _guarded(self, handler: Callable[[TurnTracer, Any, int], None], arg: Any, ns: int) -> None:
        try:
            handler(self, arg, ns)
        except Exception:  # tracing must never break the turn
            self.failed = True
            log.warning("OpenTelemetry tracing failed; the rest of this turn is not traced", exc_info=True)
            try:  # end what is open, so what was traced is exported
                self._end_llm(self.last_ns)
                if self.turn is not None:
                    self.turn.end()
            except Exception:  # noqa: BLE001 - the same broken setup; nothing more to do
                pass
            self.llm = self.turn = None

    # spans ---------------------------------------------------------------------------
    def _span(self, name: str, start: int, attributes: dict[str, Any], kind: SpanKind = SpanKind.INTERNAL) -> Span:
        """A child of the turn's span; like every span of the turn, it names the session."""
        attributes = {"session.id": self.model_attributes.get("session.id"), **attributes}
        return self.tracer.start_span(name, context=self.context, kind=kind, start_time=start,
                                      attributes=clean(attributes, self.redact))

    def _fail(self, span: Span, kind: str, message: str | None) -> None:
        span.set_attribute("error.type", kind)
        span.set_status(Status(StatusCode.ERROR, self.redact(message or kind)))

    def _start_llm(self, step: int, ns: int) -> None:
        self._end_llm(ns)
        self.attempt = self.attempt + 1 if step == self.llm_step else 1
        self.llm_step, self.llm_start, self.llm_end = step, ns, None
        self.llm = self._span(LLM_SPAN, ns, {
            **self.model_attributes, "gen_ai.operation.name": "chat", f"{PREFIX}.step": step,
            f"{PREFIX}.llm.attempt": self.attempt, OPENINFERENCE_KIND: "LLM",
        }, SpanKind.CLIENT)

    def _end_llm(self, ns: int) -> None:
        span, self.llm = self.llm, None
        if span is not None:
            span.end(end_time=self.llm_end if self.llm_end is not None else max(self.llm_start, ns))

    # handlers ------------------------------------------------------------------------
    def _turn_start(self, e: Any, ns: int) -> None:
        self.model_attributes = clean({
            "gen_ai.provider.name": e.provider or None, "gen_ai.system": e.provider or None,
            "gen_ai.request.model": e.model or None, "gen_ai.conversation.id": e.session_id or None,
            "llm.model_name": e.model or None, "llm.provider": e.provider or None,
            "session.id": e.session_id or None,  # OpenInference: Phoenix's Sessions view groups by it
        }, self.redact)
        attributes = {
            **self.model_attributes, "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": self.agent_name or None, OPENINFERENCE_KIND: "AGENT",
            f"{PREFIX}.session_id": e.session_id, f"{PREFIX}.turn_id": e.turn_id,
            f"{PREFIX}.think_level": e.think_level, f"{PREFIX}.strategy": e.strategy,
            f"{PREFIX}.max_steps": e.max_steps, f"{PREFIX}.timeout_s": e.timeout_s,
            f"{PREFIX}.reflect_every": e.reflect_every,
        }
        attributes.update(provenance_attributes(e.prompt, self.redact))
        attributes.update(run_context_attributes(e.run_context, self.redact))
        # The caller's current span (a notebook's own span around the cell) is the parent.
        self.turn = self.tracer.start_span(TURN_SPAN, start_time=ns, attributes=clean(attributes, self.redact))
        self.context = trace.set_span_in_context(self.turn)

    def _step_start(self, e: Any, ns: int) -> None:
        self.step, self.step_ns = e.step, ns

    def _mark_llm(self, step: int, ns: int) -> None:
        self._start_llm(step, ns)

    def _retry(self, e: Any, ns: int) -> None:
        if self.llm is not None:  # this attempt failed; the next one gets its own span
            self._fail(self.llm, e.reason, e.message)
            self._end_llm(ns)

    def _usage(self, e: Any, ns: int) -> None:
        if self.llm is None:  # no mark came: the step's start is the best bound there is
            self._start_llm(e.step, self.step_ns or ns)
        assert self.llm is not None
        total_input = e.input_tokens + e.cache_read_tokens + e.cache_creation_tokens
        self.llm.set_attributes(clean({
            "gen_ai.usage.input_tokens": total_input, "gen_ai.usage.output_tokens": e.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": e.cache_read_tokens or None,
            "gen_ai.usage.cache_creation.input_tokens": e.cache_creation_tokens or None,
            "llm.token_count.prompt": total_input, "llm.token_count.completion": e.output_tokens,
            "llm.token_count.total": total_input + e.output_tokens,
            f"{PREFIX}.usage.estimated": e.usage_estimated, f"{PREFIX}.cost_usd": e.cost_usd,
        }, self.redact))
        self.llm_end = ns

    def _step_end(self, e: Any, ns: int) -> None:
        if self.llm is not None:
            if e.stop_reason:
                self.llm.set_attribute("gen_ai.response.finish_reasons", [self.redact(e.stop_reason)])
            self.llm.set_attribute(f"{PREFIX}.llm.tool_calls", e.tool_calls)
            self._end_llm(ns)

    def _error(self, e: Any, ns: int) -> None:
        assert self.turn is not None
        if e.recoverable:
            self.turn.add_event(f"{PREFIX}.error", clean({"kind": e.kind, "message": e.message}, self.redact),
                                timestamp=ns)
            return
        self.error = e.message
        if self.llm is not None and self.llm_end is None:  # the model call is what failed
            self._fail(self.llm, e.kind, e.message)
            self._end_llm(ns)

    def _provider_fallback(self, e: Any, ns: int) -> None:
        span = self.llm if self.llm is not None else self.turn
        assert span is not None
        span.add_event(f"{PREFIX}.provider_fallback", clean(
            {"failed": e.failed, "next": e.next, "kind": e.kind, "message": e.message}, self.redact), timestamp=ns)
        # The chain's next member answers this call (``name:model``; the call's request
        # attributes keep the member first asked), and the turn's later calls go to it.
        provider, model = split_provider_label(e.next)
        if self.llm is not None:
            self.llm.set_attributes(clean({"gen_ai.response.model": model or None, "llm.model_name": model or None,
                                           "llm.provider": provider or None}, self.redact))
        later = {"gen_ai.provider.name": provider or None, "gen_ai.system": provider or None,
                 "gen_ai.request.model": model or None, "llm.model_name": model or None, "llm.provider": provider or None}
        for key in later:  # none of the failed member's names stays behind
            self.model_attributes.pop(key, None)
        self.model_attributes.update(clean(later, self.redact))

    def _tool_start(self, e: Any, ns: int) -> None:
        if e.by_server:
            self.server_calls.add(e.call_id)

    def _prepared(self, e: Any, ns: int) -> None:
        self.prepared_ns = ns
        if e.type == "tool_call_args":
            self.tool_args[e.call_id] = ns
            if e.arguments is not None:
                self.tool_arguments[e.call_id] = _arguments_json(e.arguments)
        elif e.type == "approval_decision":
            self.approvals[e.call_id] = {f"{PREFIX}.approval.approved": e.approved,
                                         f"{PREFIX}.approval.by": e.by, f"{PREFIX}.approval.waited_ms": e.waited_ms}

    def _tool_end(self, e: Any, ns: int) -> None:
        args_ns = self.tool_args.pop(e.call_id, None)
        ran = int(e.duration_ms * 1_000_000)
        if ran > 0:  # it ran for duration_ms, from the moment its wave was ready
            start = max(self.prepared_ns, args_ns or 0) or ns - ran
            start = min(start, ns - ran)
            end = start + ran
        else:  # never ran (unknown, blocked, invalid, denied, interrupted)
            start, end = (args_ns or ns), ns
        by_server = e.call_id in self.server_calls
        self.server_calls.discard(e.call_id)
        arguments = self.tool_arguments.pop(e.call_id, None)
        result = _capped(e.result_preview or e.error or "") or None
        span = self._span(TOOL_SPAN, start, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": e.name, "gen_ai.tool.call.id": e.call_id,
            # GenAI conventions: "function" runs on the client (here, the harness); an
            # "extension" on the agent's side, as a provider's server tool does.
            "gen_ai.tool.type": "extension" if by_server else "function", f"{PREFIX}.tool.by_server": by_server,
            "tool.name": e.name, OPENINFERENCE_KIND: "TOOL", f"{PREFIX}.step": e.step,
            f"{PREFIX}.tool.status": e.status, f"{PREFIX}.tool.wave": e.wave,
            f"{PREFIX}.tool.artifact": e.artifact, **self.approvals.pop(e.call_id, {}),
            "gen_ai.tool.call.arguments": arguments, "gen_ai.tool.call.result": result,
            "input.value": arguments, "input.mime_type": "application/json" if arguments is not None else None,
            "output.value": result, "output.mime_type": "text/plain" if result is not None else None,
        })
        if e.status != "ok":
            self._fail(span, e.status, e.error)
        span.end(end_time=end)

    def _reflection(self, e: Any, ns: int) -> None:
        span = self._span(REFLECT_SPAN, min(self.last_ns or ns, ns), {
            OPENINFERENCE_KIND: "CHAIN", f"{PREFIX}.step": e.step, f"{PREFIX}.reflection.trigger": e.trigger,
            f"{PREFIX}.reflection.confidence": e.confidence, f"{PREFIX}.reflection.skipped": e.skipped,
        })
        span.end(end_time=ns)

    def _thinking_phase(self, e: Any, ns: int) -> None:
        start = ns - int(e.duration_ms * 1_000_000)
        span = self._span(THINKING_SPAN, min(max(start, self.last_ns or start), ns), {
            OPENINFERENCE_KIND: "CHAIN", f"{PREFIX}.step": e.step, f"{PREFIX}.thinking.strategy": e.strategy or None,
            f"{PREFIX}.thinking.tokens_before": e.tokens_before, f"{PREFIX}.thinking.tokens_after": e.tokens_after,
            f"{PREFIX}.thinking.tokens": e.thinking_tokens, f"{PREFIX}.thinking.model_calls": e.model_calls,
            f"{PREFIX}.thinking.fallback": e.fallback, "output.value": e.summary or None,
        })
        span.end(end_time=ns)

    def _compaction(self, e: Any, ns: int) -> None:
        span = self._span(COMPACT_SPAN, min(self.last_ns or ns, ns), {
            OPENINFERENCE_KIND: "CHAIN", f"{PREFIX}.step": e.step, f"{PREFIX}.compaction.strategy": e.strategy,
            f"{PREFIX}.compaction.tokens_before": e.tokens_before, f"{PREFIX}.compaction.tokens_after": e.tokens_after,
            f"{PREFIX}.compaction.messages_before": e.messages_before,
            f"{PREFIX}.compaction.messages_after": e.messages_after,
            f"{PREFIX}.compaction.budget_tokens": e.budget_tokens, f"{PREFIX}.compaction.fallback": e.fallback,
        })
        span.end(end_time=ns)

    def _turn_end(self, e: Any, ns: int) -> None:
        turn = self.turn
        assert turn is not None
        self._end_llm(self.last_ns)  # a call cut short (Ctrl-C, deadline): it ended with its last output
        total_input = e.input_tokens + e.cache_read_tokens + e.cache_creation_tokens
        turn.set_attributes(clean({
            f"{PREFIX}.turn.status": e.status, f"{PREFIX}.turn.steps": e.steps,
            f"{PREFIX}.turn.tool_calls": e.tool_calls, f"{PREFIX}.turn.reflections": e.reflections,
            "gen_ai.usage.input_tokens": total_input, "gen_ai.usage.output_tokens": e.output_tokens,
            f"{PREFIX}.cost_usd": e.cost_usd, f"{PREFIX}.usage.estimated": e.usage_estimated,
        }, self.redact))
        if e.status == "error":
            self._fail(turn, "error", self.error)
        turn.end(end_time=ns)
        self.turn = self.context = None


_HANDLERS: dict[str, Callable[[TurnTracer, Any, int], None]] = {
    "turn_start": TurnTracer._turn_start,
    "step_start": TurnTracer._step_start,
    "retry": TurnTracer._retry,
    "usage": TurnTracer._usage,
    "step_end": TurnTracer._step_end,
    "error": TurnTracer._error,
    "provider_fallback": TurnTracer._provider_fallback,
    "tool_call_start": TurnTracer._tool_start,
    "tool_call_args": TurnTracer._prepared,
    "approval_request": TurnTracer._prepared,
    "approval_decision": TurnTracer._prepared,
    "tool_call_end": TurnTracer._tool_end,
    "reflection": TurnTracer._reflection,
    "thinking_phase": TurnTracer._thinking_phase,
    "compaction": TurnTracer._compaction,
    "turn_end": TurnTracer._turn_end,
}
