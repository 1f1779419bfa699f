"""ReplayingProvider: answers a turn's model calls from a recording while the requests
still mean what they meant when it was recorded, and from the live model after that.

It sits where the turn's provider sits, so the loop does not know it exists: a replayed
call streams the recorded response (text, thinking, tool calls) with zero usage, so it
costs nothing; tools still run, because the loop runs them. At the first request whose
fingerprint differs from the recording's, the rest of the turn goes to the live provider
(reported as a provider switch, so the view says where), or, in ``strict`` mode, the
call fails with what changed. Every call, replayed or live, is recorded again, so the
turn leaves a recording for the next run (``recording()``).

Secrets are masked in what it keeps (``redact``: the live provider's key, the keys in the
environment, known key formats) and in the fingerprints it compares, so the recording
saved in a shared notebook never holds a key the model echoed, and a replay shows the
mask the live view showed (issue #39).

The live provider may be absent (no key on this machine): a turn that replays fully
never needs it; one that has to go live fails with why there is none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from ...foundation.catalog import price_for
from ...foundation.redact import Redactor, redact_value
from ..base import LLMProvider, Message, ProviderError, ProviderResult, StreamEvent, ToolSchema, Usage
from ..capabilities import ExactTokenCount, ReportsFallbacks, has_native_thinking, provider_secrets
from ..chain import FallbackNotice, provider_label
from .fingerprint import RequestFingerprint, fingerprint, what_changed
from .recording import RecordedCall, TurnRecording, call_kind

ReplayMode = Literal["auto", "off", "strict"]
REPLAYED = "replayed"  # the provider name of a replayed call (priced free: foundation/catalog.py)


class ReplayMismatch(ProviderError):
    """``--replay strict`` and the request no longer matches: the turn stops here."""

    def __str__(self) -> str:
        return self.message


class ReplayingProvider:
    """A turn's provider: the recording first, the live provider from the first mismatch."""

    def __init__(self, live: LLMProvider | None, candidates: Sequence[TurnRecording] = (), *,
                 mode: ReplayMode = "auto", flags: Mapping[str, Any] | None = None, cell: str = "",
                 unavailable: str = "", redact: Callable[[str], str] | None = None) -> None:
        if live is None and not unavailable:
            unavailable = "no provider was given"
        self._live = live
        self._unavailable = unavailable
        self._candidates = list(candidates) if mode != "off" else []
        self.mode: ReplayMode = mode
        self.flags = dict(flags or {})
        self.cell = cell
        self.redact: Callable[[str], str] = redact or Redactor(provider_secrets(live) if live is not None else ())
        self._chosen: TurnRecording | None = None
        self._cursor = 0
        self._steps = 0  # step calls seen (for the message)
        self._replaying = bool(self._candidates)
        self._listener: Any = None
        self._lock = threading.Lock()
        self.calls: list[RecordedCall] = []  # this turn's calls, replayed or live
        self.replayed_calls = 0
        self.recorded_usage = Usage()  # what the replayed calls used when they were recorded
        self.live_calls = 0
        self.changed: str | None = None  # why the turn went live (or stopped)
        self._mismatch = ""  # the same, with where
        self._pending = ""  # a switch to live not reported yet
        self._replayed_ids: set[str] = set()  # tool calls of the responses replayed in this turn
        self._ran: list[str] = []  # tool calls of this turn that ran (``tool_ran``)
        self._answers: dict[str, Any] = {}  # the user's answers to servers in this turn (``record_answer``)
        self._strict_stop = ""  # strict mode's message, once it stopped

    # what the turn reads ---------------------------------------------------------------
    @property
    def name(self) -> str:
        if self._replaying:
            return REPLAYED
        return str(getattr(self._live, "name", "") or self._recorded("provider") or REPLAYED)

    @property
    def model(self) -> str:
        if self._replaying or self._live is None:
            return self._recorded("model")
        return str(getattr(self._live, "model", "") or "")

    @property
    def supports_native_thinking(self) -> bool:
        if self._live is not None:
            return has_native_thinking(self._live)
        return bool(self._candidates and self._candidates[0].native_thinking)

    @property
    def on_fallback(self) -> Any:
        return self._listener

    @on_fallback.setter
    def on_fallback(self, listener: Any) -> None:
        self._listener = listener
        if isinstance(self._live, ReportsFallbacks):  # a live chain's own switches too
            self._live.on_fallback = listener

    @property
    def live(self) -> LLMProvider | None:
        return self._live

    @property
    def state(self) -> str:
        """``replayed`` (no live call), ``partly replayed`` (live from a step on), ``stopped``
        (strict, and the recording did not match), ``live`` (no recording used) or ``""`` (no call)."""
        if self.mode == "strict" and self.changed:
            return "stopped"
        if self.replayed_calls and not self.live_calls and not self.changed:
            return "replayed"
        if self.replayed_calls:
            return "partly replayed"
        return "live" if self.live_calls else ""

    def __getattr__(self, name: str) -> Any:
        """Other abilities (server web search, a key to mask …) are the live provider's."""
        if name.startswith("_") or self.__dict__.get("_live") is None:
            raise AttributeError(name)
        return getattr(self.__dict__["_live"], name)

    def tool_ran(self, call_id: str) -> None:
        """A tool call of this turn ran (the recording integration tells, from ``ToolCallEnd``)."""
        with self._lock:
            self._ran.append(call_id)

    def ran_when_recorded(self, call_id: str) -> bool:
        """This call comes from a replayed response, and it ran when the turn was recorded:
        the same call, with the same arguments, after the same conversation, was allowed
        then (a notebook's approver lets it run again without asking)."""
        chosen = self._chosen
        return call_id in self._replayed_ids and chosen is not None and call_id in chosen.ran

    def recorded_answer(self, key: str) -> Any:
        """What the user answered to question ``key`` when the replayed turn was recorded
        (an MCP elicitation), or None: asked again. Kept for this turn's recording too."""
        chosen = self._chosen if self._replaying else None  # gone live: the user is asked
        answer = chosen.answers.get(key) if chosen is not None else None
        if answer is not None:
            with self._lock:
                self._answers[key] = answer
        return answer

    def record_answer(self, key: str, answer: Any) -> None:
        with self._lock:
            self._answers[key] = answer

    def priced_as(self, messages: list[Message], tools: list[ToolSchema], thinking_budget: int = 0) -> Any:
        """What the coming call costs like, for a budget that checks it before it is made:
        this provider (replayed: free) when the recording answers it, else the live one. It
        only looks: the call itself still decides."""
        if self._replaying:
            request = self._fingerprint(messages, tools, thinking_budget)
            with self._lock:
                if self._find(request, call_kind(messages)) is not None:
                    return self
        return self._live if self._live is not None else self

    def recorded_cost(self) -> dict[str, Any] | None:
        """What this turn's replayed calls cost when they were recorded (their tokens, and
        their price at the recorded model's rate: None when the catalogue has none), or None
        when nothing was replayed. It is shown beside the turn's figures, never added to them:
        a replayed call costs nothing now."""
        if not self.replayed_calls:
            return None
        usage = self.recorded_usage
        price = price_for(self._recorded("model") or None, self._recorded("provider") or None)
        return {**usage.model_dump(), "cost_usd": None if price is None else price.cost(usage),
                "calls": self.replayed_calls}

    def exact_input_tokens(self, messages: list[Message], tools: list[ToolSchema]) -> int | None:
        """Counted by the live API only once the turn is live (a replay makes no call)."""
        if self._replaying or not isinstance(self._live, ExactTokenCount):
            return None
        return self._live.exact_input_tokens(messages, tools)

    def recording(self) -> TurnRecording:
        """This turn's recording, to store for the next run."""
        base = self._chosen or (self._candidates[0] if self._candidates else None)
        # Who answered: the live provider once it was called (or with nothing to replay);
        # a turn replayed to the end keeps its recording's provider and model.
        live = self._live if self.live_calls or base is None else None
        return TurnRecording(
            cell=self.cell, flags=self.flags, calls=[c.masked(self.redact) for c in self.calls], ran=list(self._ran),
            answers=redact_value(dict(self._answers), self.redact),
            provider=str(getattr(live, "name", "") if live is not None else (base.provider if base else "")),
            model=str(getattr(live, "model", "") if live is not None else (base.model if base else "")),
            native_thinking=self.supports_native_thinking,
        )

    # the protocol ------------------------------------------------------------------------
    def generate(self, messages: list[Message], tools: list[ToolSchema], *, timeout_s: float = 60.0,
                 thinking_budget: int = 0) -> ProviderResult:
        request, kind, replayed = self._replay(messages, tools, thinking_budget)
        if replayed is not None:
            return replayed
        result = self._live_provider().generate(messages, tools, timeout_s=timeout_s, thinking_budget=thinking_budget)
        self._record_live(kind, request, result)
        return result

    def generate_stream(self, messages: list[Message], tools: list[ToolSchema], *, timeout_s: float = 60.0,
                        thinking_budget: int = 0) -> Iterator[StreamEvent]:
        request, kind, replayed = self._replay(messages, tools, thinking_budget)
        if replayed is not None:
            return _stream_of(replayed)
        events = self._live_provider().generate_stream(messages, tools, timeout_s=timeout_s,
                                                       thinking_budget=thinking_budget)
        return self._recording_stream(events, kind, request)

    # internals ---------------------------------------------------------------------------
    def _fingerprint(self, messages: list[Message], tools: list[ToolSchema], thinking_budget: int) -> RequestFingerprint:
        return fingerprint(messages, tools, flags=self.flags, thinking_budget=thinking_budget, redact=self.redact)

    def _recorded(self, field: str) -> str:
        base = self._chosen or (self._candidates[0] if self._candidates else None)
        return str(getattr(base, field, "") or "") if base is not None else ""

    def _replay(self, messages: list[Message], tools: list[ToolSchema],
                thinking_budget: int) -> tuple[RequestFingerprint, Any, ProviderResult | None]:
        request = self._fingerprint(messages, tools, thinking_budget)
        kind = call_kind(messages)
        with self._lock:
            if kind == "step":
                self._steps += 1
            if not self._replaying:
                if self.mode == "strict":  # strict never calls the model
                    if not self._strict_stop:
                        self.changed = ("this cell has no recording (none in the notebook or the event log has "
                                        "its source: its prompt or flags changed since it was saved, or it never ran)")
                        self._strict_stop = (f"--replay strict: {self.changed}; run it with --replay auto or "
                                             "--rerun to call the model")
                    raise ReplayMismatch(self._strict_stop, kind="other")
                self._report_pending()
                return request, kind, None
            call = self._matching(request, kind)
            if call is not None:
                self._cursor += 1
                self.replayed_calls += 1
                self.calls.append(call)
                result = call.result()
                self.recorded_usage = self.recorded_usage + result.usage
                self._replayed_ids.update(c.id for c in result.tool_calls)
                return request, kind, result.model_copy(update={"usage": Usage()})
            self._replaying = False
            self.changed = self._why(request, kind)
            where = f"step {self._steps}" if kind == "step" else f"a {kind} call (step {self._steps})"
            message = self._mismatch = f"the recording of this cell no longer matches at {where}: {self.changed}"
        if self.mode == "strict":
            self._strict_stop = (f"--replay strict: {message}; run it with --replay auto to go on live "
                                 "from there, or --rerun")
            raise ReplayMismatch(self._strict_stop, kind="other")
        self._pending = message
        self._report_pending()
        return request, kind, None

    def _matching(self, request: RequestFingerprint, kind: str) -> RecordedCall | None:
        """The recorded call answering this request, if the recording still matches (the
        first call chooses the recording)."""
        found = self._find(request, kind)
        if found is None:
            return None
        self._chosen = found[0]
        return found[1]

    def _find(self, request: RequestFingerprint, kind: str) -> tuple[TurnRecording, RecordedCall] | None:
        """The recording and its call that answer this request; it only looks (``priced_as``
        asks before the call), choosing nothing and not moving on."""
        if self._chosen is None:  # the first call: the recording whose first request it is
            for candidate in self._candidates:
                first = candidate.calls[0] if candidate.calls else None
                if first is not None and first.fp == request.value and first.kind == kind:
                    return candidate, first
            return None
        calls = self._chosen.calls
        if self._cursor < len(calls) and calls[self._cursor].fp == request.value and calls[self._cursor].kind == kind:
            return self._chosen, calls[self._cursor]
        return None

    def _why(self, request: RequestFingerprint, kind: str) -> str:
        recording = self._chosen or self._candidates[0]
        if self._cursor >= len(recording.calls):
            return f"the recording ends after {len(recording.calls)} model calls"
        if kind != "step" and self._cursor > 0:
            # The step before matched and its response was replayed: what this call reads
            # anew is that step's tool results.
            return f"a tool result of step {self._steps} changed (the {kind} reads it)"
        recorded = recording.calls[self._cursor]
        return what_changed(recorded.parts, request.parts, self.flags, recording.flags)

    def _report_pending(self) -> None:
        """The switch to live, reported once a listener is there (a step's call: a mismatch
        found at a reflection or a summary is shown with the next step)."""
        message, listener = self._pending, self._listener
        if not message or listener is None or self._live is None:
            return
        self._pending = ""
        failed = f"{REPLAYED}:{self._recorded('model')}" if self._recorded("model") else REPLAYED
        try:
            listener(FallbackNotice(failed=failed, next=provider_label(self._live), kind=self.changed or "changed",
                                    message=message))
        except Exception:  # noqa: BLE001 - a listener's failure is not the call's
            pass

    def _live_provider(self) -> LLMProvider:
        if self._live is None:
            why = f"{self._mismatch}, and " if self._mismatch else ""
            raise ReplayMismatch(f"{why}no live model can answer: {self._unavailable}", kind="auth")
        self.live_calls += 1
        return self._live

    def _record_live(self, kind: Any, request: RequestFingerprint, result: ProviderResult) -> None:
        with self._lock:
            self.calls.append(RecordedCall.of(kind, request, result, self.redact))

    def _recording_stream(self, events: Iterator[StreamEvent], kind: Any,
                          request: RequestFingerprint) -> Iterator[StreamEvent]:
        try:
            for event in events:
                if event.type == "done" and event.result is not None:
                    self._record_live(kind, request, event.result)
                yield event
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()


def _stream_of(result: ProviderResult) -> Iterator[StreamEvent]:
    """A recorded response as a stream: what a live one would have shown, at once."""
    import json

    for block in result.thinking:
        if block.text:
            yield StreamEvent(type="thinking", text=block.text)
        yield StreamEvent(type="thinking_end", signature=block.signature)
    if result.text:
        yield StreamEvent(type="text", text=result.text)
    for index, call in enumerate(result.tool_calls):
        yield StreamEvent(type="tool_call_start", index=index, tool_call_id=call.id, name=call.name)
        args = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
        yield StreamEvent(type="tool_call_args", index=index, tool_call_id=call.id, text=args)
    yield StreamEvent(type="done", result=result)
