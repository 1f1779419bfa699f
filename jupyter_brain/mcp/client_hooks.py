"""What MCP servers may ask of the kernel: sampling (a model completion), roots, logging,
and elicitation (a form or a URL for the user: ``elicitation.py``).

The kernel side plugs in a ``Sampler`` (``MCPManager.set_sampler``): it gets a plain
``SamplingRequest`` on a worker thread (never the MCP loop's), may block while the user
approves, and returns a ``SamplingReply`` or raises ``SamplingRefused`` (its message is the
one-line reason the server receives). Without a sampler, or for content it cannot carry
(images, audio, tool use), the server gets a one-line error at once: nothing hangs.

``ClientHooks`` holds the kernel's sampler and roots and builds the SDK's callbacks for one
connection; the connection passes ``ToolContext``s of its calls in flight, so a server's
progress, log lines and sampling usage reach the tool call they belong to.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agent.tool_context import ToolContext, running_turn, running_turn_usage
from .elicitation import Elicitor, elicitation_callback

log = logging.getLogger("jupyter_brain.mcp")

NO_SAMPLER = "jupyter-brain: sampling is not enabled in this kernel"
# the protocol's levels, mapped to Python logging's
LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO, "warning": logging.WARNING,
              "error": logging.ERROR, "critical": logging.CRITICAL, "alert": logging.CRITICAL,
              "emergency": logging.CRITICAL}


@dataclass(frozen=True)
class SamplingRequest:
    """A server's ``sampling/createMessage``, as text: ``messages`` are (role, text)."""

    server: str
    messages: list[tuple[str, str]]
    system_prompt: str | None
    max_tokens: int
    temperature: float | None
    stop_sequences: list[str]
    model_hints: list[str]
    call_id: str | None = None  # the tool call during which the server asked, when known


@dataclass(frozen=True)
class SamplingReply:
    """The completion. Fill the usage fields and the manager charges them to the tool call
    (its turn's tokens and cost); or charge them yourself with ``ToolContext.usage``, not both."""

    text: str
    model: str
    stop_reason: str = "endTurn"  # endTurn | stopSequence | maxTokens
    provider: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # None: priced from the model catalogue


class SamplingRefused(Exception):
    """The user or the policy refused; ``str(exc)`` is the one-line reason the server gets."""


Sampler = Callable[[SamplingRequest], SamplingReply]


@dataclass
class ClientHooks:
    """The kernel's answers to servers' requests, shared by every connection."""

    sampler: Sampler | None = None
    roots: list[Path] = field(default_factory=lambda: [Path.cwd()])
    elicitor: Elicitor | None = None  # forms and URLs a server asks the user for (elicitation.py)

    def root_list(self) -> list[tuple[str, str]]:
        """(file:// URI, name) of each root."""
        return [(p.resolve().as_uri(), p.resolve().name or str(p)) for p in self.roots]


class InFlight:
    """The ``ToolContext``s of one connection's calls in flight (a sampling request or a log
    line is charged to the latest; with none, to the running turn)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._contexts: list[ToolContext] = []

    def add(self, context: ToolContext) -> None:
        with self._lock:
            self._contexts.append(context)

    def remove(self, context: ToolContext) -> None:
        with self._lock:
            if context in self._contexts:
                self._contexts.remove(context)

    def latest(self) -> ToolContext | None:
        with self._lock:
            return self._contexts[-1] if self._contexts else None


def callbacks(server: str, hooks: ClientHooks, in_flight: InFlight) -> dict[str, Any]:
    """The SDK ``Client``'s keyword arguments for sampling, elicitation, roots and logging."""
    import mcp_types as types

    async def sampling(context: Any, params: Any) -> Any:
        sampler = hooks.sampler
        if sampler is None:
            return _refusal(server, NO_SAMPLER)
        tool = in_flight.latest()  # one call answers for the request: its id, usage and card
        try:
            request = _request(server, params, tool)
        except SamplingRefused as exc:
            return _refusal(server, str(exc))
        try:
            reply = await asyncio.to_thread(_run_sampler, sampler, request, tool)
        except SamplingRefused as exc:
            return _refusal(server, str(exc) or "jupyter-brain: the sampling request was refused")
        except Exception as exc:  # noqa: BLE001 - the server gets one line, the kernel keeps going
            return _refusal(server, f"jupyter-brain: sampling failed ({type(exc).__name__}: {exc})")
        _charge(server, reply, tool)
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=reply.text),
                                         model=reply.model or "unknown", stop_reason=reply.stop_reason or "endTurn")

    async def list_roots(context: Any) -> Any:
        return types.ListRootsResult(roots=[types.Root(uri=uri, name=name)  # type: ignore[arg-type]
                                            for uri, name in hooks.root_list()])

    async def logging_callback(params: Any) -> None:
        server_log(server, str(params.level), _log_text(params.data), params.logger, in_flight.latest())

    def elicitation_log(level: str, message: str) -> None:
        server_log(server, level, message, "jupyter-brain", in_flight.latest())

    elicitation = elicitation_callback(server, lambda: hooks.elicitor, in_flight.latest, elicitation_log)
    return {"sampling_callback": sampling, "list_roots_callback": list_roots, "logging_callback": logging_callback,
            "elicitation_callback": elicitation}


def server_log(server: str, level: str, message: str, logger: str | None, tool: ToolContext | None) -> None:
    """A server's log line: to its tool call's events, else to the running turn's, and to
    Python logging (``jupyter_brain.mcp``) when no turn sees it."""
    from ..agent.events import ServerLog

    if tool is not None:
        tool.log(server, level, message, logger)
        return
    emit = running_turn()
    if emit is not None:
        try:
            emit(ServerLog(server=server, level=level, logger=logger, message=message))
            return
        except Exception:  # noqa: BLE001 - fall back to Python logging
            pass
    log.log(LOG_LEVELS.get(level, logging.INFO), "MCP server '%s'%s: %s", server,
            f" ({logger})" if logger else "", message)


def _run_sampler(sampler: Sampler, request: SamplingRequest, tool: ToolContext | None) -> SamplingReply:
    if tool is None:
        return sampler(request)
    with tool.active():  # the sampler sees the tool call it answers for
        return sampler(request)


def _charge(server: str, reply: SamplingReply, tool: ToolContext | None) -> None:
    if not (reply.input_tokens or reply.output_tokens or reply.cost_usd):
        return
    label = f"sampling for MCP server '{server}'"
    if tool is not None:
        tool.usage(reply.provider, reply.model, reply.input_tokens, reply.output_tokens, reply.cost_usd, label)
        return
    charge = running_turn_usage()
    if charge is not None:
        charge(reply.provider, reply.model, reply.input_tokens, reply.output_tokens, reply.cost_usd, label)


def _refusal(server: str, message: str) -> Any:
    import mcp_types as types

    server_log(server, "warning", f"sampling request refused: {message}", "jupyter-brain", None)
    return types.ErrorData(code=types.INVALID_REQUEST, message=message)


def _request(server: str, params: Any, tool: ToolContext | None) -> SamplingRequest:
    messages: list[tuple[str, str]] = []
    for message in params.messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        texts = []
        for block in blocks:
            kind = getattr(block, "type", None)
            if kind != "text":
                raise SamplingRefused(f"jupyter-brain: sampling with {kind or 'unknown'} content is not supported "
                                      "(text only)")
            texts.append(str(block.text))
        messages.append((str(message.role), "\n".join(texts)))
    if getattr(params, "tools", None):
        raise SamplingRefused("jupyter-brain: sampling with tools is not supported")
    hints = [h.name for h in (getattr(params.model_preferences, "hints", None) or []) if getattr(h, "name", None)]
    return SamplingRequest(server=server, messages=messages, system_prompt=params.system_prompt,
                           max_tokens=int(params.max_tokens), temperature=params.temperature,
                           stop_sequences=list(params.stop_sequences or []), model_hints=hints,
                           call_id=tool.call_id if tool is not None else None)


def _log_text(data: Any) -> str:
    if isinstance(data, str):
        return data
    import json

    try:
        return json.dumps(data, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(data)
