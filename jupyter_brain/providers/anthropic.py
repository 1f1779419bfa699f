"""Anthropic Messages API provider, streaming through the official ``anthropic`` SDK.

Thinking budget: ``thinking_budget > 0`` turns on native extended thinking
(``{"type": "enabled", "budget_tokens": B}``). The API rejects budgets below 1024 and
requires ``max_tokens > budget``, so budgets under 1024 (think level LOW = 500) are
raised to 1024, and ``max_tokens`` for that request becomes ``budget + max_tokens`` so
the answer keeps its full allowance. Models that only accept adaptive thinking answer
a budgeted request with a 400; the provider then retries once with
``{"type": "adaptive"}`` and keeps using it for the rest of its life.

Prompt caching uses all four of the API's breakpoints, in prompt order: the last tool
schema, the last stable system block, the workspace context (a system block of its own,
after the stable ones) and the last history block. The workspace is rendered fresh for
every request but renders byte-identical text while nothing changed, so in a tool loop
each request reads tools + system + workspace + the previous history from the cache and
pays only for what the last step added. When the workspace does change (a tool created
a variable), that one request rewrites the history cache after it; the stable system and
tools stay cached.

Thinking blocks are sent back unchanged with their signatures (the API verifies them in
the tool loop). Unsigned thinking (e.g. from a session that began on another provider)
cannot be verified by the API and is dropped from the request.

How the event stream becomes a result (refusals, calls cut by ``max_tokens``, spliced or
unterminated streams) is ``anthropic_stream.py``. The server-side web search
(``web_search_tool``, the ``ServerWebSearch`` capability) and its blocks, sent back as
they came, are ``anthropic_server_tools.py``; an answer the API paused in a long search
(``pause_turn``) is sent back to go on, up to ``MAX_PAUSED_CONTINUATIONS`` times, and the
parts become one result.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from jupyter_brain.providers.anthropic_server_tools import (
    DEFAULT_MAX_USES,
    apply_native,
    native_blocks,
)
from jupyter_brain.providers.anthropic_server_tools import web_search_tool as _web_search_tool
from jupyter_brain.providers.anthropic_stream import StreamAssembler
from jupyter_brain.providers.base import (
    Message,
    ProviderError,
    ProviderResult,
    StreamEvent,
    StreamingProvider,
    ToolSchema,
    is_fresh_context,
    is_server_tool,
)
from jupyter_brain.providers.sdk_support import (
    estimate_tokens,
    guarded,
    map_sdk_error,
    transport_errors,
)

DEFAULT_MODEL = "claude-sonnet-4-6"  # current Sonnet that accepts budgeted thinking
DEFAULT_MAX_TOKENS = 8192
MIN_THINKING_BUDGET = 1024
MAX_PAUSED_CONTINUATIONS = 3
_CACHE = {"type": "ephemeral"}
_MISSING_KEY = (
    "no Anthropic API key: set the ANTHROPIC_API_KEY environment variable "
    "(e.g. os.environ['ANTHROPIC_API_KEY'] = '...' before creating the provider) "
    "or pass api_key=... to AnthropicProvider"
)


class AnthropicProvider(StreamingProvider):
    """Claude through the Messages API with streaming, extended thinking and caching."""

    name = "anthropic"
    supports_native_thinking = True

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = 600.0,
        max_retries: int = 2,
        thinking_display: str | None = None,
    ) -> None:
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        self.api_key = key  # masked in every view (providers.capabilities.provider_secrets)
        if not key:
            raise ProviderError(_MISSING_KEY, kind="auth", provider=self.name)
        self.model = model or DEFAULT_MODEL
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self.max_tokens = max_tokens
        self.thinking_display = thinking_display  # "summarized" / "omitted", model default if None
        self._adaptive_thinking = False
        self._count_endpoint_missing = False

        import anthropic

        self._sdk = anthropic
        # What a request can raise: the SDK's errors and the HTTP layer's.
        self._call_errors: tuple[type[BaseException], ...] = (anthropic.AnthropicError, *transport_errors())
        self._client = anthropic.Anthropic(
            api_key=key, base_url=self.base_url, timeout=timeout, max_retries=max_retries
        )

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"AnthropicProvider(model={self.model!r}{where})"

    # -- requests --------------------------------------------------------------------

    def request_params(
        self, messages: list[Message], tools: list[ToolSchema], thinking_budget: int = 0
    ) -> dict[str, Any]:
        """The keyword arguments for ``messages.create`` (without ``stream``/``timeout``)."""
        system, wire_messages = to_wire(messages)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": wire_messages,
        }
        if system:
            params["system"] = system
        if tools:
            params["tools"] = wire_tools(tools)
        if thinking_budget > 0:
            budget = max(thinking_budget, MIN_THINKING_BUDGET)
            params["max_tokens"] = self.max_tokens + budget
            thinking: dict[str, Any] = (
                {"type": "adaptive"}
                if self._adaptive_thinking
                else {"type": "enabled", "budget_tokens": budget}
            )
            if self.thinking_display:
                thinking["display"] = self.thinking_display
            params["thinking"] = thinking
        return params

    def web_search_tool(self, max_uses: int = DEFAULT_MAX_USES) -> ToolSchema:
        """The API's server-side web search, to offer beside the function tools."""
        return _web_search_tool(max_uses)

    def generate_stream(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        timeout_s: float = 60.0,
        thinking_budget: int = 0,
    ) -> Iterator[StreamEvent]:
        request, parts, blocks = list(messages), [], []
        for _ in range(MAX_PAUSED_CONTINUATIONS + 1):
            params = self.request_params(request, tools, thinking_budget)
            stream = self._open(params, timeout_s)
            try:
                assembler = StreamAssembler(self.model, request, tools)
                for event in assembler.run(guarded(stream, self._sdk.AnthropicError, self._error)):
                    if event.type == "done" and event.result is not None:
                        parts.append(event.result)
                    else:
                        yield event
            finally:
                stream.close()
            blocks += assembler.content_blocks()
            if not assembler.paused:
                break
            request.append(parts[-1].to_message())  # a paused answer goes back as it is: the API goes on
        yield StreamEvent(type="done", result=parts[0] if len(parts) == 1 else _joined(parts, blocks))

    def count_tokens(self, messages: list[Message], tools: list[ToolSchema]) -> int:
        """Input tokens via the count endpoint; a rough local estimate if that call fails
        (e.g. a proxy behind ANTHROPIC_BASE_URL that does not implement it)."""
        exact = self.exact_input_tokens(messages, tools)
        return exact if exact is not None else estimate_tokens(messages, tools)

    def exact_input_tokens(self, messages: list[Message], tools: list[ToolSchema],
                           *, timeout_s: float = 10.0) -> int | None:
        """The API's own count of this request, or None when the endpoint does not answer.
        The harness asks before compacting, so a wrong local estimate costs nothing."""
        if self._count_endpoint_missing:
            return None
        params = self.request_params(messages, tools)
        params.pop("max_tokens")
        try:
            return int(self._client.messages.count_tokens(**params, timeout=timeout_s).input_tokens)
        except self._sdk.NotFoundError:
            self._count_endpoint_missing = True  # a gateway without it: stop asking
            return None
        except self._call_errors:
            return None

    # -- internals -------------------------------------------------------------------

    def _open(self, params: dict[str, Any], timeout_s: float) -> Any:
        """Start the stream; the SDK retries 408/409/429/5xx before it begins."""
        try:
            return self._client.messages.create(**params, stream=True, timeout=timeout_s)
        except self._sdk.BadRequestError as err:
            if not _wants_adaptive(err, params):
                raise self._error(err) from None
            self._adaptive_thinking = True
            params["thinking"] = {
                "type": "adaptive",
                **{k: v for k, v in params["thinking"].items() if k == "display"},
            }
            return self._open(params, timeout_s)
        except self._call_errors as err:
            raise self._error(err) from None

    def _error(self, err: BaseException, *, mid_stream: bool = False) -> ProviderError:
        mapped = map_sdk_error(err, self.name, mid_stream=mid_stream)
        if mapped.kind == "auth":
            mapped.message += " (check ANTHROPIC_API_KEY or the api_key=... you passed)"
        return mapped


_StreamAssembler = StreamAssembler  # the name before the assembler had its own module


def _joined(parts: list[ProviderResult], blocks: list[dict[str, Any]]) -> ProviderResult:
    """The parts of an answer the API paused (``pause_turn``) and resumed, as one."""
    last = parts[-1]
    usage = parts[0].usage
    for part in parts[1:]:
        usage = usage + part.usage
    joined = ProviderResult(
        text="".join(p.text for p in parts), thinking=[b for p in parts for b in p.thinking],
        tool_calls=[c for p in parts for c in p.tool_calls], stop_reason=last.stop_reason,
        usage=usage, model=last.model, refusal=last.refusal,
    )
    return apply_native(joined, blocks)


def _wants_adaptive(err: Any, params: dict[str, Any]) -> bool:
    thinking = params.get("thinking") or {}
    return thinking.get("type") == "enabled" and "thinking.type.enabled" in str(err)


# -- neutral → wire --------------------------------------------------------------------

_TOOL_ID = re.compile(r"[^a-zA-Z0-9_-]")


def _tool_id(value: str) -> str:
    """The API requires ids matching ``^[a-zA-Z0-9_-]+$``; other providers' ids may not."""
    return _TOOL_ID.sub("_", value or "") or "tool_call"


def wire_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    wire = [
        dict(t) if is_server_tool(t) else {  # a server tool (web search) goes as it is
            "name": t["name"],
            "description": t.get("description", ""),
            "input_schema": t.get("input_schema") or {"type": "object", "properties": {}},
        }
        for t in tools
    ]
    if wire:
        wire[-1]["cache_control"] = dict(_CACHE)
    return wire


def to_wire(messages: list[Message]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Neutral messages → (``system`` blocks, ``messages``) with cache breakpoints set."""
    system = [
        {"type": "text", "text": m["content"]}
        for m in messages
        if m.get("role") == "system" and not is_fresh_context(m) and m.get("content")
    ]
    if system:
        system[-1]["cache_control"] = dict(_CACHE)
    workspace = "\n\n".join(
        m["content"]
        for m in messages
        if m.get("role") == "system" and is_fresh_context(m) and m.get("content")
    )

    wire: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})

    if wire:
        for block in reversed(wire[-1]["content"]):
            if block.get("type") not in ("thinking", "redacted_thinking"):
                block["cache_control"] = dict(_CACHE)
                break
    if workspace:
        system.append({"type": "text", "text": workspace, "cache_control": dict(_CACHE)})
    return system, wire


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    role = message.get("role")
    if role == "user":
        return "user", _content_blocks(message.get("content"))
    if role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": _tool_id(message.get("tool_call_id", "")),
            "content": str(message.get("content") or ""),
        }
        if message.get("images"):  # figures as image blocks inside the result
            text = result["content"]
            result["content"] = [{"type": "text", "text": text}] if text else []
            result["content"] += [
                {"type": "image", "source": {"type": "base64", "media_type": im.get("media_type") or "image/png",
                                             "data": im.get("data", "")}}
                for im in message["images"]
            ]
        if message.get("is_error"):
            result["is_error"] = True
        return "user", [result]
    if role == "assistant":
        blocks: list[dict[str, Any]] = []
        for t in message.get("thinking") or []:
            if t.get("redacted") and t.get("data"):
                blocks.append({"type": "redacted_thinking", "data": t["data"]})
            elif t.get("signature"):
                blocks.append(
                    {"type": "thinking", "thinking": t.get("text", ""), "signature": t["signature"]}
                )
        native = native_blocks(message, _tool_use)  # an answer with server tool blocks: as it came
        if native is not None:
            return "assistant", blocks + native
        blocks.extend(_content_blocks(message.get("content")))
        blocks.extend(_tool_use(call) for call in message.get("tool_calls") or [])
        return "assistant", blocks
    return "user", []


def _tool_use(call: dict[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments")
    return {
        "type": "tool_use",
        "id": _tool_id(call.get("id", "")),
        "name": call["name"],
        "input": arguments if isinstance(arguments, dict) else {},
    }


def _content_blocks(content: Any) -> list[dict[str, Any]]:
    """A string becomes one text block (none if empty: the API rejects empty text)."""
    if isinstance(content, list):
        return [dict(b) for b in content if isinstance(b, dict)]
    if content:
        return [{"type": "text", "text": str(content)}]
    return []
