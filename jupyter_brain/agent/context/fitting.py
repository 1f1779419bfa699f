"""Fitting each request of a turn into the context budget.

Every model request is built fresh (system prompt, workspace, history), measured with the
session's calibrated counter, checked against the session's context levels, and at the
critical level the history is compacted in place before the request is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ...foundation.tokens import TokenCounter, tokenizer_loaded
from ...providers.capabilities import ExactTokenCount
from ..events import CompactionEvent, ContextWarning
from ..images import drop_old_images
from .compaction import CompactionResult, CompactionStrategy, Summarizer
from .layers import ContextLayer, render_layers
from .levels import ContextLevelChange, ContextWarningTracker
from .selection import select_tools

Message = dict[str, Any]
Emit = Callable[[Any], None]


def build_request(messages: list[Message], system_prompt: str,
                  workspace: Callable[[], str] | None,
                  layers: Sequence[ContextLayer] = ()) -> list[Message]:
    """System prompt, the turn's layers, then the workspace rendered now (never stored),
    then the history."""
    request: list[Message] = [{"role": "system", "content": system_prompt}]
    request += render_layers(layers)
    if workspace is not None:
        request += render_layers([ContextLayer("workspace", workspace)])
    return request + messages


ToolBoosts = Callable[[str], Mapping[str, float]]


def offered_tools(schemas: list[dict[str, Any]], history: list[Message], user_message: str, *,
                  semantic: bool, max_tools: int, tool_boosts: ToolBoosts | Sequence[ToolBoosts] | None = None,
                  blocked: Mapping[str, str] | None = None, always: Iterable[str] = (),
                  keywords: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The tools a turn offers (``split_tools``' first part)."""
    return split_tools(schemas, history, user_message, semantic=semantic, max_tools=max_tools,
                       tool_boosts=tool_boosts, blocked=blocked, always=always, keywords=keywords)[0]


def split_tools(schemas: list[dict[str, Any]], history: list[Message], user_message: str, *,
                semantic: bool, max_tools: int, tool_boosts: ToolBoosts | Sequence[ToolBoosts] | None = None,
                blocked: Mapping[str, str] | None = None, always: Iterable[str] = (),
                keywords: Mapping[str, str] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(offered, deferred): all tool schemas but the ``blocked`` ones, or with semantic
    selection on and many tools, the most relevant (plus ``always``, any the conversation
    already used, and ``read_artifact`` once a result names an artifact) and the rest;
    ``tool_boosts`` (asked only then, with the user message; several add up) ranks tools
    that helped before higher; ``keywords`` are words a tool is found by, never sent."""
    if blocked:
        schemas = [schema for schema in schemas if schema.get("name") not in blocked]
    if not semantic or len(schemas) <= max_tools:
        return schemas, []
    used = {c.get("name") for m in history for c in (m.get("tool_calls") or [])}
    if any(m.get("role") == "tool" and "read_artifact(" in str(m.get("content", "")) for m in history):
        used.add("read_artifact")
    recent = " ".join(str(m.get("content", "")) for m in history[-4:] if m.get("role") in ("user", "assistant"))
    boosts = _boosts(tool_boosts, user_message)
    offered = select_tools(schemas, f"{user_message} {recent}", max_tools, always={*used, *always}, boosts=boosts,
                           keywords=keywords)
    chosen = {id(s) for s in offered}
    return offered, [s for s in schemas if id(s) not in chosen]


def _boosts(tool_boosts: ToolBoosts | Sequence[ToolBoosts] | None, question: str) -> Mapping[str, float] | None:
    if tool_boosts is None or callable(tool_boosts):
        return None if tool_boosts is None else tool_boosts(question)
    if not tool_boosts:
        return None
    total: dict[str, float] = {}
    for boost in tool_boosts:
        for name, value in boost(question).items():
            total[name] = total.get(name, 0.0) + value
    return total


# Tool schemas built by ``ToolSpec.schema()`` (name, description, the spec's input schema,
# which is built once per argument model): the same list costs the same tokens every turn.
_SCHEMA_KEYS = frozenset({"name", "description", "input_schema"})
_TOOLS_TOKENS: dict[tuple[Any, ...], tuple[list[Any], int]] = {}


def count_tools(counter: TokenCounter, schemas: list[dict[str, Any]]) -> int:
    """``counter.count_tools(schemas)``, remembered per list of tools. The input schemas are
    held by the cache, so the identity in its key cannot be reused by another object."""
    if not all(s.keys() <= _SCHEMA_KEYS for s in schemas):
        return counter.count_tools(schemas)
    key = tuple((s.get("name"), s.get("description"), id(s.get("input_schema"))) for s in schemas)
    hit = _TOOLS_TOKENS.get(key)
    if hit is not None:
        return hit[1]
    tokens = counter.count_tools(schemas)
    if len(_TOOLS_TOKENS) >= 256:
        _TOOLS_TOKENS.clear()
    _TOOLS_TOKENS[key] = ([s.get("input_schema") for s in schemas], tokens)
    return tokens


class ContextFitter:
    """One turn's request builder and meter. The counter and the tracker belong to the
    session, so calibration and the context level carry over from cell to cell."""

    def __init__(
        self,
        *,
        counter: TokenCounter,
        tracker: ContextWarningTracker,
        compaction: CompactionStrategy,
        budget_tokens: int,
        target: float,
        auto_compact: bool,
        provider: Any,
        tool_schemas: list[dict[str, Any]],
        workspace: Callable[[], str] | None,
    ) -> None:
        self.counter = counter
        self.tracker = tracker
        self.compaction = compaction
        self.budget_tokens = budget_tokens
        self.target = target
        self.auto_compact = auto_compact
        self.provider = provider
        self.tool_schemas = tool_schemas
        self.workspace = workspace
        self.layers: Sequence[ContextLayer] = ()  # the turn's own fresh layers (memories, ...)
        self.compactions = 0
        self._raw = 0  # the request about to be sent, in our tokenizer's units
        self._estimate = 0  # the same, calibrated to the provider's counts
        # Running count of the history: messages are only appended during a turn (a
        # compaction resets it), so each request counts just what is new.
        self._counted_upto = 0
        self._counted_tokens = 0
        self._tools_tokens: int | None = None
        self._system_key: list[tuple[Any, Any]] | None = None  # (role, content) of the system part counted
        self._system_tokens = 0
        # A request sent before it was counted (``_count_later``): (request, its history's
        # length, step, emit), counted by ``settle``.
        self._uncounted: tuple[list[Message], int, int, Emit] | None = None

    def recount(self) -> None:
        """The history was rewritten (not only appended to): count it afresh next time."""
        self._counted_upto = self._counted_tokens = 0

    def fit(self, messages: list[Message], system_prompt: str, *, protect: int, goal: str,
            summarize: Summarizer, step: int, emit: Emit) -> tuple[bool, list[Message]]:
        """Build and measure the next request; at the critical level compact ``messages``
        in place and rebuild it. Returns (whether ``messages`` was rewritten, the request).

        Level changes and compactions are events. A compaction that cannot get under the
        budget still sends what it has. The workspace renders once per request.
        """
        self.settle()
        request = build_request(messages, system_prompt, self.workspace, self.layers)
        if self._count_later(request, messages, step, emit):
            return False, request
        tokens = self._measure(request, messages)
        critical = self.tracker.critical_tokens
        if self.auto_compact and tokens >= critical:
            tokens = self._confirm_count(request, tokens)
        change = self.tracker.update(tokens)
        if not self.auto_compact or tokens < critical:
            self._emit_level(change, step, emit)
            return False, request
        before_images = tokens
        if drop_old_images(messages):  # old figures go first: the model saw them when new
            self._counted_upto = self._counted_tokens = 0
            request = build_request(messages, system_prompt, self.workspace, self.layers)
            tokens = self._measure(request, messages)
            if tokens < critical:
                self.compactions += 1
                emit(CompactionEvent(step=step, strategy="drop_images", tokens_before=before_images,
                                     tokens_after=tokens, messages_before=len(messages),
                                     messages_after=len(messages), budget_tokens=self.budget_tokens))
                self._emit_net_level(change, step, tokens, emit)
                return True, request
        overhead = self._raw - self._counted_tokens  # system part + tool schemas
        result: CompactionResult = self.compaction.compact(
            messages, budget_tokens=int(self.budget_tokens * self.target), counter=self.counter,
            protect_from=protect, goal=goal, summarize=summarize, overhead_tokens=overhead,
        )
        if not result.changed:
            self._emit_level(change, step, emit)
            return False, request
        messages[:] = result.messages
        self._counted_upto = self._counted_tokens = 0
        self.compactions += 1
        emit(CompactionEvent(
            step=step, strategy=result.strategy, tokens_before=result.tokens_before,
            tokens_after=result.tokens_after, messages_before=result.messages_before,
            messages_after=result.messages_after, budget_tokens=self.budget_tokens, fallback=result.fallback,
        ))
        system_part = [m for m in request if m.get("role") == "system"]
        request = system_part + messages  # the same system prompt and workspace render
        tokens = self._measure(request, messages)
        self._emit_net_level(change, step, tokens, emit)
        return True, request

    def _emit_net_level(self, change: ContextLevelChange | None, step: int, tokens: int, emit: Emit) -> None:
        """After a compaction: its event tells the story; a level event only for a net
        change from where the context stood before this request."""
        after = self.tracker.update(tokens)
        before = change.previous if change is not None else (after.previous if after is not None else None)
        if before is not None and before != self.tracker.level:
            emit(ContextWarning(step=step, level=self.tracker.level, previous=before, tokens=tokens,
                                window=self.budget_tokens))

    def _count_later(self, request: list[Message], messages: list[Message], step: int, emit: Emit) -> bool:
        """Send this request now and count it after (``settle``), when counting it would
        first load the tokenizer (a kernel's first request: a few hundred ms before its first
        word, #40) and cannot change what happens before the call: the context is at the
        ``ok`` level and a bound on the count (bytes, ``TokenCounter.bound_request``) stays
        below the warning level, so no level change, no warning and no compaction can come
        of the exact count. Cost caps and the governance ledger count for themselves."""
        if tokenizer_loaded() or self.tracker.level != "ok":
            return False
        bound = self.counter.calibrated(self.counter.bound_request(request, self.tool_schemas))
        if bound >= self.tracker.warning_tokens:
            return False
        self._uncounted = (request, len(messages), step, emit)
        return True

    def settle(self) -> None:
        """Count the request ``fit`` sent uncounted, as ``fit`` would have counted it, before
        anything reads the count (the next request, ``observe``, the turn's end)."""
        if self._uncounted is None:
            return
        request, length, step, emit = self._uncounted
        self._uncounted = None
        tokens = self._measure(request, request[len(request) - length:])
        self._emit_level(self.tracker.update(tokens), step, emit)  # none: the bound was below every level

    @property
    def last_request_raw(self) -> int:
        """The last request's tokens, in our tokenizer's units (counted now if it was sent uncounted)."""
        self.settle()
        return self._raw

    @property
    def last_request_estimate(self) -> int:
        """The same, calibrated to the provider's counts."""
        self.settle()
        return self._estimate

    def observe(self, reported_input_tokens: int) -> None:
        """The provider's own count of the request we measured: later estimates follow it."""
        if reported_input_tokens > 0 and self.last_request_raw > 0:
            self.counter.observe(self._raw, reported_input_tokens)

    def _measure(self, request: list[Message], messages: list[Message]) -> int:
        """Raw tokens of ``request`` (its system part + ``messages``) plus the tool schemas;
        returns the calibrated estimate."""
        if self._counted_upto > len(messages):
            self._counted_upto = self._counted_tokens = 0
        count = self.counter.count_message
        for message in messages[self._counted_upto:]:
            self._counted_tokens += count(message)
        self._counted_upto = len(messages)
        if self._tools_tokens is None:
            self._tools_tokens = count_tools(self.counter, self.tool_schemas)
        # The system part (prompt, workspace render) is counted again only when its text
        # changed: the prompt is fixed for the turn, the workspace rarely changes.
        system_part = request[: len(request) - len(messages)]
        key = [(m.get("role"), m.get("content")) for m in system_part]
        if key != self._system_key:
            self._system_key, self._system_tokens = key, sum(count(m) for m in system_part)
        self._raw = self._system_tokens + self._counted_tokens + self._tools_tokens
        self._estimate = self.counter.calibrated(self._raw)
        return self._estimate

    def _confirm_count(self, request: list[Message], estimate: int) -> int:
        """Before compacting on an estimate, ask the provider for its exact count where it
        offers one (Anthropic's count endpoint), and learn from the answer."""
        if not isinstance(self.provider, ExactTokenCount):
            return estimate
        try:
            exact = self.provider.exact_input_tokens(request, self.tool_schemas)
        except Exception:  # noqa: BLE001 - counting must never break the turn
            return estimate
        if not exact:
            return estimate
        self.counter.observe(self._raw, exact)
        self._estimate = exact
        return exact

    def _emit_level(self, change: ContextLevelChange | None, step: int, emit: Emit) -> None:
        if change is not None:
            emit(ContextWarning(step=step, level=change.level, previous=change.previous, tokens=change.tokens,
                                window=change.window))
