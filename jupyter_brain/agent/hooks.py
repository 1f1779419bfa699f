"""The contract between the turn loop and everything that plugs into it.

An ``Integration`` (memory, tracing, web search, a user's own hook …) builds a
``TurnHook`` for each turn, or ``None`` when it is off for that turn. The loop calls the
hooks' methods at fixed points, in this order:

1. ``prepare_tools``    the tools the model is offered (block one, add a turn-only tool)
2. ``turn_start``       after ``TurnStart`` was emitted
3. ``context_layers``   fresh parts of every request of the turn (never in the history)
4. ``process_history``  each step, before the request is fitted (may rewrite the history)
5. ``before_model_call`` each model call (each attempt), may change the request; also the
   turn's side calls (compaction summary, reflection, thinking phase: ``purpose``)
6. ``on_event``         every event, after it was stamped and masked
7. ``after_model_call`` each answered model call, may change the result
8. ``finish_answer``    the answer before ``TurnEnd`` (add sources, veto it)
9. ``result_fields``    extra ``TurnResult`` fields
10. ``after_turn``      the finished turn (learn from it, record it)

Every method is a no-op until overridden. Hooks see data (dataclasses and a read-only
``TurnContext``), never the loop: what they may do to a turn is what these values and the
context's services allow. One ``HookDispatcher`` calls them; a hook that raises becomes one
recoverable ``ErrorEvent`` and the turn goes on (after the turn: a logged warning).

One exception is meant to end the turn: a hook raises ``StopTurn(status, message)`` (a
budget cap, a policy) at ``turn_start``, ``context_layers``, ``process_history``,
``before_model_call`` or ``after_model_call``; the dispatcher lets it through and the
loop ends the turn cleanly with that status and message (every tool call answered, the
history valid, ``TurnEnd`` logged). Raised anywhere else it is a failure like any other.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, get_args, runtime_checkable

from .context.layers import ContextLayer
from .events import ErrorEvent, EventBase, TurnStatus
from .turn_options import TurnOptions

if TYPE_CHECKING:
    from ..providers.base import LLMProvider, ProviderResult
    from .results import ToolCallRecord, TurnResult
    from .tools import ToolSpec

__all__ = [
    "Answer", "CheckedProvider", "ContextLayer", "HistoryView", "HookDispatcher", "Integration", "ModelRequest",
    "Sources", "Spent", "StopTurn", "ToolOffer", "TurnContext", "TurnHook", "as_integration",
]

Message = dict[str, Any]
ToolBoosts = Callable[[str], Mapping[str, float]]

log = logging.getLogger("jupyter_brain.hooks")


# the data hooks see ----------------------------------------------------------------------
@dataclass
class Sources:
    """What the turn found to cite, shared by the integrations that find it (context pack,
    web search) and the one that cites it, so that none imports another."""

    context_pack: dict[str, Any] | None = None  # the passages sent (``TurnResult.context_pack_json``)
    web: list[dict[str, str]] = field(default_factory=list)  # {"url", "title"}
    local: list[str] = field(default_factory=list)  # workspace anchors the answer used
    rendered_pages: list[str] = field(default_factory=list)  # fetched pages saved as Markdown


@dataclass
class ToolOffer:
    """The tools of one turn, as ``prepare_tools`` shapes them before the model sees any.

    ``registry`` names the harness's tools (selection may still drop some); ``blocked``
    takes tools out of the turn (name → why: refused if the model calls them anyway);
    ``tools`` are this turn's own tools, run like the registry's; ``schemas`` are tools
    the provider runs itself (a server-side search); ``boosts`` rank tools when semantic
    selection picks a subset.
    """

    registry: frozenset[str]
    blocked: dict[str, str] = field(default_factory=dict)
    tools: list[ToolSpec] = field(default_factory=list)
    schemas: list[dict[str, Any]] = field(default_factory=list)
    boosts: list[ToolBoosts] = field(default_factory=list)


@dataclass(frozen=True)
class HistoryView:
    """The history before a step's request is fitted. ``prompt_index``: where the user's
    message of this turn is (a rewrite must keep it)."""

    messages: Sequence[Message]
    step: int
    prompt_index: int


@dataclass(frozen=True)
class ModelRequest:
    """One model call about to be made: the messages as fitted and the tools offered.

    ``purpose`` says which call: ``"step"`` (the turn's own, answered by ``ctx.provider``)
    or a side call the turn makes around it (``"compaction"``, ``"reflection"``,
    ``"thinking_phase"``); ``provider`` is who answers a side call (None: the turn's
    provider) and ``thinking_budget`` the thinking tokens the call may add to its output.
    """

    step: int
    messages: list[Message]
    tool_schemas: list[dict[str, Any]]
    purpose: str = "step"
    provider: Any = None
    thinking_budget: int = 0


@dataclass(frozen=True)
class Spent:
    """What the turn's model calls used so far: every call, side calls included.
    ``cost_usd`` is None once a call had no known price."""

    tokens: int = 0  # input (cache reads and writes included) + output
    cost_usd: float | None = 0.0


class StopTurn(BaseException):
    """Raised by a hook to end the turn now, with ``status`` (a ``TurnStatus``) and
    ``message`` as its final text (what happened and how to go on).

    A ``BaseException``, as ``KeyboardInterrupt`` is: code that isolates failures
    (``except Exception``: a reflection, a thinking phase, a summary that falls back)
    lets it through to the loop, which ends the turn cleanly with it.
    """

    def __init__(self, status: str, message: str) -> None:
        if status not in get_args(TurnStatus) or status in ("completed", "refused"):  # those carry an answer
            raise ValueError(f"StopTurn needs a turn status that is not an answer (budget, error …), not {status!r}")
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Answer:
    """The turn's answer before ``TurnEnd``; ``tool_calls`` are the turn's records."""

    text: str
    status: str
    step: int
    tool_calls: Sequence[ToolCallRecord] = ()


@dataclass(frozen=True)
class TurnContext:
    """What a hook knows of its turn, and the few things it may ask of it.

    Facts are fixed for the turn. ``sources`` and ``tools_offered`` are shared records
    (the loop fills ``tools_offered`` once the tools are prepared). The services are
    plain callables: emit an event, charge a model call's usage, keep a record beside the
    event log, the time left, mask secrets, add a record of a tool the provider ran,
    what the turn's calls used so far (``spent``), and ``check_call``: a hook's own model
    call passed through the hooks' ``before_model_call`` first (``CheckedProvider`` does
    it for a provider a library calls).
    """

    session_id: str
    turn_id: str
    user_message: str
    options: TurnOptions
    provider: LLMProvider
    provider_name: str
    model: str
    agent_id: str
    working_directory: str
    think_level: str
    strategy: str | None
    max_steps: int
    timeout_s: float
    run_context: Mapping[str, Any]
    prompt: Mapping[str, Any]
    workspace: Callable[[], str] | None
    sources: Sources
    tools_offered: list[str]
    emit: Callable[[EventBase], None]
    charge_usage: Callable[..., float | None]  # (usage, *, provider=None, thinking_phase=False) -> cost
    record: Callable[[str, dict[str, Any]], None]  # (kind, data): a record beside the event log
    time_left: Callable[[], float]
    redact: Callable[[str], str]
    add_tool_call: Callable[[ToolCallRecord], None]
    spent: Callable[[], Spent] = Spent
    check_call: Callable[[ModelRequest], ModelRequest] = lambda request: request


class CheckedProvider:
    """A provider whose every call first passes through the turn's ``before_model_call``
    (as ``ModelRequest(purpose=...)``): a side call made inside a library (reflection, the
    thinking phase) is seen, and may be stopped, like the turn's own calls."""

    def __init__(self, provider: Any, check: Callable[[ModelRequest], ModelRequest], purpose: str,
                 step: Callable[[], int] = lambda: 0) -> None:
        self.provider = provider
        self._check = check
        self._purpose = purpose
        self._step = step

    def __getattr__(self, name: str) -> Any:  # name, model, max_tokens … are the provider's
        return getattr(self.provider, name)

    def _checked(self, messages: list[Message], tools: list[dict[str, Any]], thinking_budget: int) -> ModelRequest:
        return self._check(ModelRequest(self._step(), list(messages), list(tools), purpose=self._purpose,
                                        provider=self.provider, thinking_budget=thinking_budget))

    def generate(self, messages: list[Message], tools: list[dict[str, Any]], **kwargs: Any) -> Any:
        request = self._checked(messages, tools, int(kwargs.get("thinking_budget", 0) or 0))
        return self.provider.generate(request.messages, request.tool_schemas, **kwargs)

    def generate_stream(self, messages: list[Message], tools: list[dict[str, Any]], **kwargs: Any) -> Any:
        request = self._checked(messages, tools, int(kwargs.get("thinking_budget", 0) or 0))
        return self.provider.generate_stream(request.messages, request.tool_schemas, **kwargs)


# the contract --------------------------------------------------------------------------
class TurnHook:
    """One turn's hook. Override the points you need; the others cost nothing.

    ``name`` is the ``kind`` of the ``ErrorEvent`` a failure becomes; ``logger`` where a
    failure after the turn is logged.
    """

    name: str = "hook"
    logger: str = "jupyter_brain.hooks"

    def prepare_tools(self, ctx: TurnContext, offer: ToolOffer) -> ToolOffer:
        return offer

    def turn_start(self, ctx: TurnContext) -> None:
        return None

    def context_layers(self, ctx: TurnContext) -> Sequence[ContextLayer]:
        return ()

    def process_history(self, ctx: TurnContext, history: HistoryView) -> list[Message] | None:
        """A new history for the rest of the turn, or None to keep it."""
        return None

    def before_model_call(self, ctx: TurnContext, request: ModelRequest) -> ModelRequest:
        return request

    def on_event(self, ctx: TurnContext, event: EventBase) -> None:
        return None

    def after_model_call(self, ctx: TurnContext, step: int, result: ProviderResult) -> ProviderResult:
        return result

    def finish_answer(self, ctx: TurnContext, answer: Answer) -> Answer:
        return answer

    def result_fields(self, ctx: TurnContext) -> Mapping[str, Any]:
        return {}

    def after_turn(self, ctx: TurnContext, result: TurnResult) -> None:
        return None


@runtime_checkable
class Integration(Protocol):
    """Builds a turn's hook, or None when it has nothing to do in that turn.

    One that only some turns use may also name the ``TurnOptions`` fields that switch it
    on (``turn_options = ("top_k",)``): in a turn where all of them keep their defaults,
    ``for_turn`` is not even called.
    """

    def for_turn(self, ctx: TurnContext) -> TurnHook | None: ...


@dataclass(frozen=True)
class _EveryTurn:
    """A ``TurnHook`` given directly: the same object hooks every turn."""

    hook: TurnHook

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        return self.hook


def as_integration(item: Integration | TurnHook) -> Integration:
    """``AgentHarness(hooks=[...])`` takes integrations and plain hooks alike."""
    if isinstance(item, TurnHook):
        return _EveryTurn(item)
    if isinstance(item, Integration):
        return item
    raise TypeError(f"a hook is a TurnHook or an Integration (with for_turn(ctx)), not {type(item).__name__}")


# the dispatcher ------------------------------------------------------------------------
POINTS = (
    "prepare_tools", "turn_start", "context_layers", "process_history", "before_model_call", "on_event",
    "after_model_call", "finish_answer", "result_fields", "after_turn",
)
_FAILED = {  # how a failure reads: "<name> failed <this>"
    "prepare_tools": "while preparing the tools", "turn_start": "at the start of the turn",
    "context_layers": "to add its context", "process_history": "while processing the history",
    "before_model_call": "before a model call", "on_event": "on an event",
    "after_model_call": "after a model call", "finish_answer": "while finishing the answer",
    "result_fields": "while filling the result", "for_turn": "to start",
}


# Where a hook's ``StopTurn`` ends the turn (elsewhere it is a failure like any other).
STOPPABLE = frozenset({"turn_start", "context_layers", "process_history", "before_model_call", "after_model_call"})

_OPTION_DEFAULTS = {f.name: f.default for f in dataclasses.fields(TurnOptions)}


def _overrides(hook: TurnHook, point: str) -> bool:
    return getattr(type(hook), point, None) is not getattr(TurnHook, point)


class HookDispatcher:
    """Calls a turn's hooks in order at each point, one failure at a time isolated.

    Only the hooks that override a point are called there. ``on_event`` is the exception:
    the emitter calls the hooks' ``on_event`` itself (``event_observers``), so an event goes
    through no module of the contract, and without such a hook it calls nothing at all.
    """

    def __init__(self, integrations: Sequence[Integration], ctx: TurnContext, step: Callable[[], int]) -> None:
        self.ctx = ctx
        self._step = step
        self._closed = False  # after TurnEnd: failures are logged, not emitted
        hooks: list[TurnHook] = []
        for integration in integrations:
            switches = getattr(integration, "turn_options", ())
            if switches and all(getattr(ctx.options, name) == _OPTION_DEFAULTS[name] for name in switches):
                continue  # off in this turn
            hook = self._start(integration)
            if hook is not None:
                hooks.append(hook)
        self.hooks = hooks
        self._at = {point: [h for h in hooks if _overrides(h, point)] for point in POINTS}
        self._observers: dict[Callable[[EventBase], None], TurnHook] = {
            partial(h.on_event, ctx): h for h in self._at["on_event"]}

    # the points ---------------------------------------------------------------------
    def prepare_tools(self, offer: ToolOffer) -> ToolOffer:
        for hook in self._at["prepare_tools"]:
            offer = self._call(hook, "prepare_tools", offer, offer)
        return offer

    def turn_start(self) -> None:
        for hook in self._at["turn_start"]:
            self._call(hook, "turn_start", None)

    def context_layers(self) -> list[ContextLayer]:
        layers: list[ContextLayer] = []
        for hook in self._at["context_layers"]:
            layers += self._call(hook, "context_layers", ())
        return layers

    def process_history(self, history: HistoryView) -> list[Message] | None:
        """The last rewrite (each hook sees the history as the previous one left it)."""
        rewritten: list[Message] | None = None
        for hook in self._at["process_history"]:
            new = self._call(hook, "process_history", None, history)
            if new is not None:
                rewritten = new
                history = HistoryView(new, history.step, history.prompt_index)
        return rewritten

    def before_model_call(self, request: ModelRequest) -> ModelRequest:
        for hook in self._at["before_model_call"]:
            request = self._call(hook, "before_model_call", request, request)
        return request

    def after_model_call(self, step: int, result: ProviderResult) -> ProviderResult:
        for hook in self._at["after_model_call"]:
            result = self._call(hook, "after_model_call", result, step, result)
        return result

    def finish_answer(self, answer: Answer) -> Answer:
        for hook in self._at["finish_answer"]:
            answer = self._call(hook, "finish_answer", answer, answer)
        return answer

    def result_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        for hook in self._at["result_fields"]:
            fields.update(self._call(hook, "result_fields", {}))
        return fields

    def after_turn(self, result: TurnResult) -> None:
        self._closed = True
        for hook in self._at["after_turn"]:
            self._call(hook, "after_turn", None, result)

    def event_observers(self) -> tuple[Callable[[EventBase], None], ...]:
        """Each event hook's ``on_event`` with the turn's context, in order (for the emitter)."""
        return tuple(self._observers)

    def event_failed(self, observer: Callable[[EventBase], None], exc: BaseException) -> None:
        """The emitter left out an observer that raised: report it (once)."""
        hook = self._observers.pop(observer)
        self._report(hook.name, hook.logger, "on_event", exc)

    # isolation ----------------------------------------------------------------------
    def _call(self, hook: TurnHook, point: str, fallback: Any, *args: Any) -> Any:
        try:
            return getattr(hook, point)(self.ctx, *args)
        except StopTurn as stop:
            if point in STOPPABLE and not self._closed:
                raise  # the loop ends the turn with it
            self._at[point] = [h for h in self._at[point] if h is not hook]
            self._report(hook.name, hook.logger, point, stop)
            return fallback
        except Exception as exc:  # noqa: BLE001 - the one place a hook's failure is isolated
            # Not called at this point again in this turn: one failure, one report.
            self._at[point] = [h for h in self._at[point] if h is not hook]
            self._report(hook.name, hook.logger, point, exc)
            return fallback

    def _start(self, integration: Integration) -> TurnHook | None:
        try:
            return integration.for_turn(self.ctx)
        except (Exception, StopTurn) as exc:  # noqa: BLE001 - an integration that cannot start is left out
            name = getattr(integration, "name", type(integration).__name__)
            self._report(str(name), "jupyter_brain.hooks", "for_turn", exc)
            return None

    def _report(self, name: str, logger: str, point: str, exc: BaseException) -> None:
        error = self.ctx.redact(f"{type(exc).__name__}: {exc}")
        if self._closed:
            logging.getLogger(logger).warning("%s failed to observe turn %s: %s", name, self.ctx.turn_id, error)
            return
        message = f"{name} failed {_FAILED[point]}, the turn goes on without it: {error}"
        logging.getLogger(logger).warning("%s", message)
        self.ctx.emit(ErrorEvent(step=self._step(), kind=name, message=message, recoverable=True))

    def close(self) -> None:
        """The turn ended (``TurnEnd`` was emitted): a later failure is only logged."""
        self._closed = True
