"""OpenAI-compatible Chat Completions provider (OpenAI, Ollama, vLLM, LM Studio, …).

Streams with ``stream_options={"include_usage": True}`` so the last chunk carries usage.
Reasoning arrives in one of two ways depending on the server: inline as
``<think>…</think>`` in ``content`` (split out by ``ThinkTagSplitter``, also when a tag is
cut across chunks) or as a separate ``reasoning_content`` / ``reasoning`` delta field.
Both become thinking events; such thinking has no signature and is never sent back,
since these servers do not accept it in the history.

All system messages are merged into one leading system message, workspace context last:
several chat templates (vLLM, Ollama) reject a system message that is not first.
Tool errors have no wire flag here, so their content is prefixed with ``ERROR:``.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from typing import Any

from jupyter_brain.providers.base import (
    Message,
    ProviderError,
    ProviderResult,
    StopReason,
    StreamEvent,
    ThinkingBlock,
    ToolCall,
    ToolSchema,
    Usage,
    StreamingProvider,
)
from jupyter_brain.providers.sdk_support import (
    estimate_tokens,
    guarded,
    map_sdk_error,
    parse_arguments,
    transport_errors,
)
from jupyter_brain.providers.think_tags import ThinkTagSplitter

# preset -> (default base_url, placeholder key or None if a real key is required, model)
PRESETS: dict[str, tuple[str | None, str | None, str | None]] = {
    "openai": (None, None, "gpt-5.4"),
    "ollama": ("http://localhost:11434/v1", "ollama", None),
    "vllm": ("http://localhost:8000/v1", "vllm", None),
}
_FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


class OpenAICompatProvider(StreamingProvider):
    """Chat Completions over the official ``openai`` SDK, against any compatible server.

    Local presets (``ollama``, ``vllm``) need no key; without ``model`` they use the first
    model the server lists at ``/v1/models`` (looked up on the first request).
    """

    supports_native_thinking = False

    def __init__(
        self,
        model: str | None = None,
        *,
        preset: str = "openai",
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int | None = None,
        timeout: float = 600.0,
        max_retries: int = 2,
    ) -> None:
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of {sorted(PRESETS)}")
        default_url, placeholder_key, default_model = PRESETS[preset]
        self.name = preset
        if preset == "openai":
            base_url = (
                base_url
                or os.environ.get("OPENAI_BASE_URL")
                or os.environ.get("JUPYTER_BRAIN_BASE_URL")
            )
        self.base_url = base_url or default_url
        key = api_key or (os.environ.get("OPENAI_API_KEY") if preset == "openai" else None)
        self.api_key = key  # masked in every view (providers.capabilities.provider_secrets)
        if not key:
            if placeholder_key is None and _is_official(self.base_url):
                raise ProviderError(
                    "no OpenAI API key: set the OPENAI_API_KEY environment variable or pass "
                    "api_key=...; for a local server set OPENAI_BASE_URL (or use the "
                    "'ollama' / 'vllm' provider)",
                    kind="auth",
                    provider=self.name,
                )
            key = placeholder_key or "not-needed"
        self.model = model or default_model or ""
        self.max_tokens = max_tokens

        import openai

        self._sdk = openai
        self._client = openai.OpenAI(
            api_key=key, base_url=self.base_url, timeout=timeout, max_retries=max_retries
        )

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"OpenAICompatProvider(preset={self.name!r}, model={self.model!r}{where})"

    def request_params(self, messages: list[Message], tools: list[ToolSchema]) -> dict[str, Any]:
        """Keyword arguments for ``chat.completions.create`` (without ``timeout``)."""
        params: dict[str, Any] = {
            "model": self._resolve_model(),
            "messages": to_wire(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            params["tools"] = wire_tools(tools)
        if self.max_tokens:
            # OpenAI's own reasoning models only accept the newer name.
            field = "max_completion_tokens" if self.name == "openai" else "max_tokens"
            params[field] = self.max_tokens
        return params

    def generate_stream(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        timeout_s: float = 60.0,
        thinking_budget: int = 0,
    ) -> Iterator[StreamEvent]:
        """``thinking_budget`` is ignored: there is no portable way to set one here."""
        params = self.request_params(messages, tools)
        try:
            stream = self._client.chat.completions.create(**params, timeout=timeout_s)
        except (self._sdk.OpenAIError, *transport_errors()) as err:
            raise self._error(err) from None
        try:
            yield from _ChunkAssembler(self.name, self.model).run(guarded(stream, self._sdk.OpenAIError, self._error))
        finally:
            stream.close()

    def count_tokens(self, messages: list[Message], tools: list[ToolSchema]) -> int:
        """Chat Completions has no count endpoint, so this is a local estimate."""
        return estimate_tokens(messages, tools)

    def _resolve_model(self) -> str:
        if self.model:
            return self.model
        try:
            models = [m.id for m in self._client.models.list()]
        except (self._sdk.OpenAIError, *transport_errors()) as err:
            raise self._error(err) from None
        if not models:
            raise ProviderError(
                f"no model given and the server at {self.base_url} lists none; pass model=...",
                kind="bad_request",
                provider=self.name,
            )
        self.model = models[0]
        return self.model

    def _error(self, err: BaseException, *, mid_stream: bool = False) -> ProviderError:
        mapped = map_sdk_error(err, self.name, mid_stream=mid_stream)
        if mapped.kind == "auth":
            mapped.message += " (check OPENAI_API_KEY or the api_key=... you passed)"
        return mapped


def _is_official(base_url: str | None) -> bool:
    return not base_url or "api.openai.com" in base_url


class _ChunkAssembler:
    """Turns Chat Completions chunks into StreamEvents and a final result."""

    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.splitter = ThinkTagSplitter()
        self.text: list[str] = []
        self.thinking: list[ThinkingBlock] = []
        self.open_thinking: list[str] | None = None
        self.calls: list[dict[str, Any]] = []
        self.by_index: dict[int, int] = {}
        self.usage = Usage()
        self.finish: str | None = None

    def run(self, chunks: Iterator[Any]) -> Iterator[StreamEvent]:
        for chunk in chunks:
            self.model = getattr(chunk, "model", None) or self.model
            if getattr(chunk, "usage", None) is not None:
                self._take_usage(chunk.usage)
            for choice in chunk.choices or []:
                if choice.index != 0:
                    continue
                yield from self._delta(choice.delta)
                if choice.finish_reason:
                    self.finish = choice.finish_reason
        if self.finish is None:
            raise ProviderError(
                "the connection closed before the response was complete (no finish_reason)",
                kind="connection",
                retryable=True,
                provider=self.provider,
            )
        yield from self._segments(self.splitter.finish())
        yield from self._end_thinking()
        tool_calls = [_tool_call(c) for c in self.calls]
        stop = _FINISH.get(self.finish, "other")
        if tool_calls and stop == "end_turn":
            stop = "tool_use"  # some servers report "stop" after tool calls
        result = ProviderResult(
            text="".join(self.text),
            thinking=self.thinking,
            tool_calls=tool_calls,
            stop_reason=stop,
            usage=self.usage,
            model=self.model,
        )
        yield StreamEvent(type="done", result=result)

    def _delta(self, delta: Any) -> Iterator[StreamEvent]:
        if delta is None:
            return
        reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            yield from self._thinking(reasoning)
        if delta.content:
            yield from self._end_thinking_if_field()
            yield from self._segments(self.splitter.feed(delta.content))
        for wire in delta.tool_calls or []:
            yield from self._end_thinking_if_field()
            yield from self._tool_delta(wire)

    def _segments(self, segments: list[tuple[str, str]]) -> Iterator[StreamEvent]:
        for kind, text in segments:
            if kind == "text":
                self.text.append(text)
                yield StreamEvent(type="text", text=text)
            elif kind == "thinking":
                yield from self._thinking(text)
            else:
                yield from self._end_thinking()

    def _thinking(self, text: str) -> Iterator[StreamEvent]:
        if self.open_thinking is None:
            self.open_thinking = []
        self.open_thinking.append(text)
        yield StreamEvent(type="thinking", text=text, index=len(self.thinking))

    def _end_thinking(self) -> Iterator[StreamEvent]:
        if self.open_thinking is None:
            return
        text, self.open_thinking = "".join(self.open_thinking), None
        if text:
            self.thinking.append(ThinkingBlock(text=text))
            yield StreamEvent(type="thinking_end", index=len(self.thinking) - 1)

    def _end_thinking_if_field(self) -> Iterator[StreamEvent]:
        """Field reasoning ends when content or tool calls start; inline tags end themselves."""
        if not self.splitter.inside:
            yield from self._end_thinking()

    def _tool_delta(self, wire: Any) -> Iterator[StreamEvent]:
        fn = wire.function
        name = (fn.name if fn else None) or ""
        fragment = (fn.arguments if fn else None) or ""
        ordinal = self.by_index.get(wire.index)
        call = self.calls[ordinal] if ordinal is not None else None
        # Some servers send each parallel call whole with the same index; a new id
        # under a known index is a new call.
        if call is None or (wire.id and call["id"] and wire.id != call["id"]):
            ordinal = len(self.calls)
            self.by_index[wire.index] = ordinal
            call = {"id": wire.id or "", "name": "", "args": "", "started": False}
            self.calls.append(call)
        if wire.id and not call["id"]:
            call["id"] = wire.id
        call["name"] += name
        call["args"] += fragment
        if not call["started"] and call["name"]:
            call["started"] = True
            call["id"] = call["id"] or f"call_{uuid.uuid4().hex[:24]}"
            yield StreamEvent(
                type="tool_call_start", tool_call_id=call["id"], name=call["name"], index=ordinal
            )
            fragment = call["args"]  # anything that came before the name
        if call["started"] and fragment:
            yield StreamEvent(
                type="tool_call_args",
                text=fragment,
                tool_call_id=call["id"],
                name=call["name"],
                index=ordinal,
            )

    def _take_usage(self, usage: Any) -> None:
        details = getattr(usage, "prompt_tokens_details", None)
        cached = int(getattr(details, "cached_tokens", 0) or 0) if details else 0
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        self.usage = Usage(
            input_tokens=max(prompt - cached, 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            cache_read_tokens=cached,
        )


def _tool_call(call: dict[str, Any]) -> ToolCall:
    arguments, raw = parse_arguments(call["args"])
    call_id = call["id"] or f"call_{uuid.uuid4().hex[:24]}"
    return ToolCall(id=call_id, name=call["name"], arguments=arguments, raw_arguments=raw)


# -- neutral → wire --------------------------------------------------------------------


def wire_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]


def to_wire(messages: list[Message]) -> list[dict[str, Any]]:
    """Neutral messages → Chat Completions messages (thinking is not sent back)."""
    stable = [m["content"] for m in messages if _is_system(m) and m.get("kind") != "workspace"]
    workspace = [m["content"] for m in messages if _is_system(m) and m.get("kind") == "workspace"]
    system = "\n\n".join(c for c in stable + workspace if c)
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        role = m.get("role")
        if role == "user":
            wire.append({"role": "user", "content": m.get("content") or ""})
        elif role == "assistant":
            out: dict[str, Any] = {"role": "assistant", "content": m.get("content") or None}
            calls = m.get("tool_calls") or []
            if calls:
                out["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {
                            "name": c["name"],
                            "arguments": json.dumps(c.get("arguments") or {}),
                        },
                    }
                    for c in calls
                ]
            elif out["content"] is None:
                out["content"] = ""
            wire.append(out)
        elif role == "tool":
            content = str(m.get("content") or "")
            if m.get("is_error") and not content.startswith("ERROR"):
                content = "ERROR: " + content
            wire.append({"role": "tool", "tool_call_id": m.get("tool_call_id", ""), "content": content})
    return wire


def _is_system(message: Message) -> bool:
    return message.get("role") == "system"
