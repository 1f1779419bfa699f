"""ChainProvider: a primary provider and its fallbacks, tried in order for each call.

Why a chain falls through, and when it does not:

- A call goes to the next member only when the failing one produced **no output** (no
  stream event) and its error says the provider, not the request, is at fault:
  ``overloaded``, ``rate_limit`` (after the SDK's own retries), ``server``, ``timeout``,
  ``connection``, ``stream`` (an error event before any content) and ``auth`` — a
  missing or rejected key of the primary is the common case of "this provider is not
  available here". A ``bad_request`` (or ``other``) is about the request itself; another
  provider would be handed the same mistake, so it is raised unchanged.
- A failure **after** output was streamed is never switched silently: the views already
  show that output. It is raised as it came, and the agent's retry (``agent/retry.py``)
  decides, calling the chain again — which starts at the same member.

The chain stays with the member that answered (no failing request per step while the
primary is down) and goes back to the primary after ``retry_primary_after_s``. ``name``
and ``model`` are the active member's, so prices, the context window and the views name
the model that answered. Each switch is reported to ``on_fallback`` (a ``FallbackNotice``)
before the next member is asked; the agent turns it into its ``ProviderFallback`` event.

History needs one conversion here: Anthropic requires the assistant message it continues
inside a tool loop to start with its own signed thinking when thinking is on, so a native
thinking member that takes over a loop another member began is asked without thinking for
that request. Everything else is dropped by the members' own wire formats (Anthropic sends
only signed thinking back; OpenAI-compatible servers get no thinking blocks, only the text
as ``reasoning_content`` where the server requires it).

A chain offers no server-side web search (``ServerWebSearch``): only one member could run
it, so with ``web_mode="on"`` the harness uses the search function the user passed, which
every member can call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .base import (
    LLMProvider,
    Message,
    ProviderError,
    ProviderResult,
    StreamEvent,
    ToolSchema,
    close_stream,
)
from .capabilities import ExactTokenCount, clone_for_run, has_native_thinking

# Failures (before any output) that move the call to the next member; see the docstring.
FALLBACK_KINDS: frozenset[str] = frozenset(
    {"auth", "rate_limit", "overloaded", "server", "timeout", "connection", "stream"}
)
DEFAULT_RETRY_PRIMARY_AFTER_S = 300.0


def provider_label(provider: Any) -> str:
    """``name:model`` (or just the name when the model is not known yet)."""
    name = str(getattr(provider, "name", "") or type(provider).__name__)
    model = str(getattr(provider, "model", "") or "")
    return f"{name}:{model}" if model else name


def split_provider_label(label: str) -> tuple[str, str]:
    """(name, model) of a ``provider_label``: a name holds no colon, a model may
    (``ollama:qwen3:4b`` is ``("ollama", "qwen3:4b")``); model "" when there is none."""
    name, _, model = label.partition(":")
    return name, model


@dataclass(frozen=True)
class FallbackNotice:
    """One switch: ``failed`` could not answer (``kind``, ``message``), ``next`` is asked."""

    failed: str
    next: str
    kind: str
    message: str
    status_code: int | None = None


FallbackListener = Callable[[FallbackNotice], None]


class UnavailableProvider:
    """A member that could not be built (e.g. no API key): every call raises its error,
    so the chain reports it and goes on, instead of the whole chain failing to build."""

    supports_native_thinking = False

    def __init__(self, name: str, model: str | None, error: ProviderError) -> None:
        self.name = name
        self.model = model or ""
        self.error = error

    def __repr__(self) -> str:
        return f"UnavailableProvider({self.name!r}, {self.error.kind})"

    def generate(self, messages: list[Message], tools: list[ToolSchema], *, timeout_s: float = 60.0,
                 thinking_budget: int = 0) -> ProviderResult:
        raise self._fresh_error()

    def generate_stream(self, messages: list[Message], tools: list[ToolSchema], *, timeout_s: float = 60.0,
                        thinking_budget: int = 0) -> Iterator[StreamEvent]:
        raise self._fresh_error()

    def _fresh_error(self) -> ProviderError:
        """A new exception each call (re-raising one instance would grow its traceback)."""
        e = self.error
        return ProviderError(e.message, kind=e.kind, status_code=e.status_code, retryable=e.retryable,
                             provider=e.provider or self.name)


class ChainProvider:
    """``ChainProvider([primary, fallback, ...])``: one provider to the harness; each call
    is answered by the first member that can (see the module docstring for the rules)."""

    def __init__(
        self,
        members: Sequence[LLMProvider],
        *,
        retry_primary_after_s: float = DEFAULT_RETRY_PRIMARY_AFTER_S,
        fall_through: Collection[str] = FALLBACK_KINDS,
        on_fallback: FallbackListener | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        members = list(members)
        if not members:
            raise ValueError("a ChainProvider needs at least one provider")
        for member in members:
            if not isinstance(member, LLMProvider):
                raise TypeError(f"a ChainProvider member must be an LLM provider, not {type(member).__name__}")
        self.members: tuple[LLMProvider, ...] = tuple(members)
        self.retry_primary_after_s = retry_primary_after_s
        self.fall_through = frozenset(fall_through)
        self.on_fallback = on_fallback
        self._clock = clock
        self._active = 0  # the member asked first
        self._since = 0.0  # when the chain moved off the primary
        self._last_answered: int | None = None

    def __repr__(self) -> str:
        return f"ChainProvider([{', '.join(provider_label(m) for m in self.members)}])"

    # what the harness reads: the active member's -----------------------------------------
    @property
    def active(self) -> LLMProvider:
        return self.members[self._active]

    @property
    def name(self) -> str:
        return str(getattr(self.active, "name", ""))

    @name.setter
    def name(self, value: str) -> None:
        raise AttributeError("a chain's name is its active member's")

    @property
    def model(self) -> str:
        return str(getattr(self.active, "model", "") or "")

    @model.setter
    def model(self, value: str) -> None:
        raise AttributeError("a chain's model is its active member's")

    @property
    def supports_native_thinking(self) -> bool:
        """Native thinking only while the active member has it (fixed per turn by the agent)."""
        return has_native_thinking(self.active)

    def exact_input_tokens(self, messages: list[Message], tools: list[ToolSchema]) -> int | None:
        member = self.active
        return member.exact_input_tokens(messages, tools) if isinstance(member, ExactTokenCount) else None

    def clone(self) -> ChainProvider:
        """A chain with its own state (the active member, the listener) for a concurrent run;
        members that keep per-run state are cloned, the SDK-backed ones shared."""
        return ChainProvider([clone_for_run(m) for m in self.members], retry_primary_after_s=self.retry_primary_after_s,
                             fall_through=self.fall_through, clock=self._clock)

    # calls ---------------------------------------------------------------------------------
    def generate(self, messages: list[Message], tools: list[ToolSchema], *, timeout_s: float = 60.0,
                 thinking_budget: int = 0) -> ProviderResult:
        order = self._order()
        errors: list[tuple[str, ProviderError]] = []
        for n, i in enumerate(order):
            member = self.members[i]
            budget = self._budget_for(member, i, messages, thinking_budget)
            try:
                result = member.generate(messages, tools, timeout_s=timeout_s, thinking_budget=budget)
            except ProviderError as exc:
                self._failed(exc, order, n, errors, produced_output=False)
                continue
            self._answered(i)
            return result
        raise AssertionError("unreachable: the last member's failure is raised")  # pragma: no cover

    def generate_stream(self, messages: list[Message], tools: list[ToolSchema], *, timeout_s: float = 60.0,
                        thinking_budget: int = 0) -> Iterator[StreamEvent]:
        order = self._order()
        errors: list[tuple[str, ProviderError]] = []
        for n, i in enumerate(order):
            member = self.members[i]
            budget = self._budget_for(member, i, messages, thinking_budget)
            produced, stream = False, None
            try:
                stream = member.generate_stream(messages, tools, timeout_s=timeout_s, thinking_budget=budget)
                for event in stream:
                    if not produced:
                        produced = True
                        self._answered(i)  # it answers from its first event: name/model say so
                    yield event
            except ProviderError as exc:
                self._failed(exc, order, n, errors, produced_output=produced)
                continue
            finally:
                close_stream(stream)  # also when the caller stops early (a cancel, Ctrl-C)
            return

    # internals -------------------------------------------------------------------------------
    def _order(self) -> list[int]:
        """The active member first, then the rest in chain order (each asked at most once);
        from the primary again once ``retry_primary_after_s`` has passed."""
        if self._active and self._clock() - self._since >= self.retry_primary_after_s:
            self._active = 0
        start = self._active
        return [start, *(i for i in range(len(self.members)) if i != start)]

    def _answered(self, index: int) -> None:
        if index != self._active:
            self._active = index
            self._since = self._clock()
        self._last_answered = index

    def _failed(self, exc: ProviderError, order: list[int], n: int, errors: list[tuple[str, ProviderError]], *,
                produced_output: bool) -> None:
        """Raise unless the next member should be asked; report the switch when it is.
        ``errors``: this call's earlier failures, for the message when every member failed."""
        if produced_output or not self._falls_through(exc):
            raise exc
        if n + 1 >= len(order):
            raise _all_failed(exc, errors)
        failed = self.members[order[n]]
        errors.append((provider_label(failed), exc))
        nxt = self.members[order[n + 1]]
        notice = FallbackNotice(failed=provider_label(failed), next=provider_label(nxt), kind=exc.kind,
                                message=exc.message[:300], status_code=exc.status_code)
        listener = self.on_fallback
        if listener is not None:
            listener(notice)

    def _falls_through(self, exc: ProviderError) -> bool:
        return exc.kind in self.fall_through or (exc.retryable and exc.kind != "bad_request")

    def _budget_for(self, member: LLMProvider, index: int, messages: list[Message], budget: int) -> int:
        """No native thinking for a member taking over a tool loop whose last assistant message
        carries no signed thinking (another member wrote it): the API would reject the request."""
        if budget <= 0 or index == self._last_answered or not has_native_thinking(member):
            return budget
        return budget if _loop_message_is_signed(messages) else 0


def _loop_message_is_signed(messages: list[Message]) -> bool:
    """True unless the request continues a tool loop from an assistant message without signed
    (or redacted) thinking. A request that ends with the user's own message starts a new
    assistant turn, where any thinking configuration is fine."""
    for message in reversed(messages):
        role = message.get("role")
        if role == "assistant":
            blocks = message.get("thinking") or []
            return any(b.get("signature") or (b.get("redacted") and b.get("data")) for b in blocks)
        if role == "user":
            return True
    return True


def _all_failed(last: ProviderError, errors: list[tuple[str, ProviderError]]) -> ProviderError:
    """The last member's error, naming the others' failures; its kind and status stay the
    last one's, so the agent's retry treats it as it would treat that failure."""
    if not errors:
        return last
    earlier = "; ".join(f"{label}: {exc.kind} ({exc.message[:120]})" for label, exc in errors)
    error = ProviderError(f"{last.message} (every provider of the chain failed; before: {earlier})", kind=last.kind,
                          status_code=last.status_code, retryable=last.retryable, provider=last.provider)
    if getattr(last, "mid_stream", False):
        error.mid_stream = True  # type: ignore[attr-defined]
    return error
