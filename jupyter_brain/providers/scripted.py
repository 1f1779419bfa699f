"""ScriptedProvider: a deterministic offline model for tests, benchmarks and notebooks.

Each model call takes the next scripted response. A response is a ``ProviderResult``,
a plain string (the answer text), a dict (``text``, ``thinking``, ``tool_calls``,
``usage``, ``error``), or a callable ``(messages, tools) -> response`` for replies that
depend on what the agent has seen. Streaming splits the text into small chunks so the
same code paths run as with a real model.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .base import (
    Message,
    ProviderError,
    ProviderResult,
    StreamEvent,
    ThinkingBlock,
    ToolCall,
    ToolSchema,
    Usage,
)

Response = ProviderResult | str | dict[str, Any] | Callable[[list[Message], list[ToolSchema]], Any]

_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.S)
_CHUNK = re.compile(r"\S+\s*|\s+")

DEFAULT_REFLECTION = "Progress is on track: the steps so far answer the question. Confidence: 0.8"


class ScriptedProvider:
    """Replays scripted responses in order; reflection calls get their own queue.

    Reflection requests (a system message with ``"kind": "reflection"``) take from
    ``reflections`` (or a fixed default), and compaction summaries (``"kind":
    "summary_request"``) from ``summaries`` (or an extractive stand-in), so a script for
    the main loop does not shift when reflection or compaction happen.
    """

    name = "scripted"
    supports_native_thinking = False

    def __init__(
        self,
        responses: Iterable[Response] = (),
        *,
        reflections: Iterable[Response] | None = None,
        summaries: Iterable[Response] | None = None,
        model: str = "scripted",
        chunk_words: int = 1,
        delay_s: float = 0.0,
        repeat: bool = False,
    ) -> None:
        self.model = model
        self._responses = list(responses)
        self._reflections = list(reflections) if reflections is not None else None
        self._iter: Iterator[Response] = (
            itertools.cycle(self._responses) if repeat and self._responses else iter(self._responses)
        )
        self._reflection_iter = iter(self._reflections) if self._reflections is not None else None
        self._summaries = list(summaries) if summaries is not None else None
        self._summary_iter = iter(self._summaries) if self._summaries is not None else None
        self._repeat = repeat
        self.chunk_words = max(1, chunk_words)
        self.delay_s = delay_s
        self.calls: list[dict[str, Any]] = []  # every request, for assertions
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    def __repr__(self) -> str:
        return f"ScriptedProvider(responses={len(self._responses)}, model={self.model!r})"

    @property
    def has_script(self) -> bool:
        """Whether it was given any response: without one its first call can only fail."""
        return bool(self._responses)

    def clone(self) -> ScriptedProvider:
        """The same script from its start, with a cursor of its own (``%%compare`` gives
        each concurrent run one, so no run consumes another's replies)."""
        return ScriptedProvider(
            self._responses, reflections=self._reflections, summaries=self._summaries, model=self.model,
            chunk_words=self.chunk_words, delay_s=self.delay_s, repeat=self._repeat,
        )

    # protocol ------------------------------------------------------------------
    def generate(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        timeout_s: float = 60.0,
        thinking_budget: int = 0,
    ) -> ProviderResult:
        return self._next(messages, tools)

    def generate_stream(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        timeout_s: float = 60.0,
        thinking_budget: int = 0,
    ) -> Iterator[StreamEvent]:
        result = self._next(messages, tools)
        return self._stream(result)

    def count_tokens(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> int:
        return _estimate_tokens(messages, tools or [])

    # internals -----------------------------------------------------------------
    def _next(self, messages: list[Message], tools: list[ToolSchema]) -> ProviderResult:
        is_reflection = any(m.get("kind") == "reflection" for m in messages)
        is_summary = any(m.get("kind") == "summary_request" for m in messages)
        with self._lock:
            # A snapshot: callers (and tests) may keep appending to the list they passed.
            self.calls.append({"messages": list(messages), "tools": list(tools), "reflection": is_reflection,
                               "summary": is_summary})
            if is_summary:
                fallback = _extractive_summary(messages)
                response: Response = fallback if self._summary_iter is None else next(self._summary_iter, fallback)
            elif is_reflection:
                if self._reflection_iter is None:
                    response = DEFAULT_REFLECTION
                else:
                    response = next(self._reflection_iter, DEFAULT_REFLECTION)
            else:
                try:
                    response = next(self._iter)
                except StopIteration:
                    raise ProviderError(
                        f"the script has no response left (it had {len(self._responses)}); "
                        "add more responses to the ScriptedProvider",
                        kind="other",
                        provider="scripted",
                    ) from None
        if callable(response) and not isinstance(response, ProviderResult):
            response = response(messages, tools)
        return self._to_result(response, messages, tools)

    def _to_result(self, response: Any, messages: list[Message], tools: list[ToolSchema]) -> ProviderResult:
        if isinstance(response, ProviderResult):
            return response
        if isinstance(response, BaseException):
            raise response
        if isinstance(response, str):
            response = {"text": response}
        if not isinstance(response, dict):
            raise TypeError(f"a scripted response must be a ProviderResult, str, dict or callable, not {type(response).__name__}")
        if "error" in response:
            err = response["error"]
            if isinstance(err, BaseException):
                raise err
            err = err if isinstance(err, dict) else {"message": str(err)}
            raise ProviderError(err.get("message", "scripted error"), kind=err.get("kind", "other"),
                                status_code=err.get("status_code"), provider="scripted")
        if response.get("delay_s"):
            time.sleep(float(response["delay_s"]))
        text = str(response.get("text", ""))
        thinking = response.get("thinking") or []
        if isinstance(thinking, str):
            thinking = [thinking]
        tagged = _THINK.findall(text)
        if tagged:
            thinking = list(thinking) + [t.strip() for t in tagged]
            text = _THINK.sub("", text).lstrip()
        calls = [
            ToolCall(
                id=c.get("id") or f"call_{next(self._ids)}",
                name=c["name"],
                arguments=c.get("arguments", {}),
                raw_arguments=c.get("raw_arguments"),
            )
            for c in response.get("tool_calls", [])
        ]
        blocks = [ThinkingBlock(text=t) if isinstance(t, str) else ThinkingBlock(**t) for t in thinking]
        usage = response.get("usage")
        if usage is None:
            usage = Usage(
                input_tokens=_estimate_tokens(messages, tools),
                output_tokens=max(1, _count_text(text) + sum(_count_text(b.text) for b in blocks)),
            )
        elif isinstance(usage, dict):
            usage = Usage(**usage)
        return ProviderResult(
            text=text,
            thinking=blocks,
            tool_calls=calls,
            stop_reason=response.get("stop_reason") or ("tool_use" if calls else "end_turn"),
            usage=usage,
            model=self.model,
        )

    def _stream(self, result: ProviderResult) -> Iterator[StreamEvent]:
        for block in result.thinking:
            for chunk in self._chunks(block.text):
                yield StreamEvent(type="thinking", text=chunk)
            yield StreamEvent(type="thinking_end", signature=block.signature)
        for chunk in self._chunks(result.text):
            yield StreamEvent(type="text", text=chunk)
        import json

        for index, call in enumerate(result.tool_calls):
            yield StreamEvent(type="tool_call_start", index=index, tool_call_id=call.id, name=call.name)
            args = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
            yield StreamEvent(type="tool_call_args", index=index, tool_call_id=call.id, text=args)
        yield StreamEvent(type="done", result=result)

    def _chunks(self, text: str) -> Iterator[str]:
        pieces = _CHUNK.findall(text)
        for i in range(0, len(pieces), self.chunk_words):
            if self.delay_s:
                time.sleep(self.delay_s)
            yield "".join(pieces[i : i + self.chunk_words])


def _extractive_summary(messages: list[Message]) -> str:
    """A deterministic stand-in for a model's summary: the transcript's first lines."""
    transcript = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    lines = [line.strip() for line in str(transcript).splitlines() if line.strip()]
    kept = [line[:160] for line in lines[:8]]
    return "Earlier in this conversation (scripted summary):\n" + "\n".join(f"- {line}" for line in kept)


def _count_text(text: str) -> int:
    from ..foundation.tokens import TokenCounter

    return TokenCounter().count_text(text)


def _estimate_tokens(messages: list[Message], tools: list[ToolSchema]) -> int:
    """Input tokens as the real tokenizer counts the request (what an API would report)."""
    from ..foundation.tokens import TokenCounter

    return max(1, TokenCounter().count_request(messages, tools))
