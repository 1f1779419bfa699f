"""Assemble Chat Completions stream chunks into StreamEvents and one ``ProviderResult``.

Servers differ in what they put in a chunk, and every one of these shapes was seen in
recorded real streams (``tests/providers/recorded``):

- reasoning as ``reasoning_content`` (DeepSeek, xAI, vLLM, llama.cpp) or ``reasoning``
  (Ollama, OpenRouter), or inline as ``<think>…</think>`` in ``content``;
- ``content`` as a list of parts (Mistral's Magistral: ``thinking`` parts holding text
  parts, and ``text`` parts), mixed with plain strings in the same stream;
- tool calls streamed in fragments (OpenAI), whole in one chunk (Ollama, Groq, xAI), with
  no ``index`` (Mistral), several reusing one index, or arguments as an object;
- ``refusal`` deltas (OpenAI) instead of content;
- usage in a last chunk with empty ``choices``, on the finish chunk (Mistral, DeepSeek),
  with reasoning counted inside ``completion_tokens`` (OpenAI, DeepSeek) or outside it
  (xAI: ``total_tokens`` = prompt + completion + reasoning), or not at all (Ollama without
  ``include_usage``: then it is estimated with the tokenizer and marked so);
- no ``data: [DONE]`` at the end: the finish chunk is what completes the answer;
- ``data: [DONE]`` and no finish_reason at all (tinyq4): the stop reason is inferred
  (``stream_end.py``) and ``ProviderResult.stop_reason_inferred`` says so.

A chunk of a shape none of this covers becomes a ``ProviderError`` naming the server,
never a Python exception from deep inside the assembler.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
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
)
from jupyter_brain.providers.sdk_support import parse_arguments
from jupyter_brain.providers.stream_end import inferred_finish
from jupyter_brain.providers.think_tags import Segment, ThinkTagSplitter
from jupyter_brain.providers.usage_estimate import estimate_usage, reported_nothing

FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "eos": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
CONTENT_FILTER_NOTE = "the server's content filter stopped the answer (finish_reason: content_filter)"
_TEXT_PARTS = ("text", "output_text")
_THINKING_PARTS = ("thinking", "reasoning")


def field(obj: Any, name: str) -> Any:
    """``obj.name`` for SDK objects, ``obj[name]`` for the raw dicts a lenient parse leaves."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


class ChunkAssembler:
    """Turns Chat Completions chunks into StreamEvents and a final result.

    ``server`` names the endpoint in errors; ``messages`` / ``tools`` (the request) are
    only used to estimate usage when the server reported none. ``ended_with_done`` tells
    after the last chunk whether the body ended with ``[DONE]`` (None: unknown); with it,
    a stream without a finish_reason ended on purpose and ``max_tokens`` (the request's
    bound) decides the inferred stop reason.
    """

    def __init__(
        self,
        provider: str,
        model: str,
        server: str = "",
        messages: list[Message] | None = None,
        tools: list[ToolSchema] | None = None,
        *,
        max_tokens: int | None = None,
        ended_with_done: Callable[[], bool | None] | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.server = server or provider
        self.request = (messages or [], tools or [])
        self.splitter = ThinkTagSplitter()
        self.text: list[str] = []
        self.thinking: list[ThinkingBlock] = []
        self.open_thinking: list[str] | None = None
        self.refusal: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.by_index: dict[Any, int] = {}
        self.usage = Usage()
        self.finish: str | None = None
        self.finish_inferred = False
        self.max_tokens = max_tokens
        self.ended_with_done = ended_with_done
        self.delta_chunks = 0  # chunks that carried some output: a token each on tinyq4

    def run(self, chunks: Iterator[Any]) -> Iterator[StreamEvent]:
        try:
            for chunk in chunks:
                yield from self._chunk(chunk)
        except (TypeError, AttributeError, KeyError, ValueError) as err:
            raise self._shape_error(f"{type(err).__name__}: {err}") from None
        if self.finish is None and self.ended_with_done is not None and self.ended_with_done():
            # [DONE] without any finish_reason (tinyq4): an end, not a dropped connection
            self.finish, self.finish_inferred = inferred_finish(self.delta_chunks, self.max_tokens), True
        if self.finish is None:
            raise ProviderError(
                "the connection closed before the response was complete (no finish_reason)",
                kind="connection",
                retryable=True,
                provider=self.provider,
            )
        yield from self._segments(self.splitter.finish())
        yield from self._end_thinking()
        yield StreamEvent(type="done", result=self.result())

    def result(self) -> ProviderResult:
        finish = self.finish or "stop"
        tool_calls = [_tool_call(c) for c in self.calls]
        stop = FINISH.get(finish, "other")
        if tool_calls and stop == "end_turn":
            stop = "tool_use"  # some servers report "stop" after tool calls
        if stop == "max_tokens" and tool_calls:
            _mark_truncated(tool_calls[-1], self.calls[-1]["args"])
        refusal = "".join(self.refusal) or None
        if refusal is not None:
            stop = "refusal"
        elif stop == "refusal":
            refusal = CONTENT_FILTER_NOTE
        result = ProviderResult(
            text="".join(self.text),
            thinking=self.thinking,
            tool_calls=tool_calls,
            stop_reason=stop,
            usage=self.usage,
            model=self.model,
            refusal=refusal,
            stop_reason_inferred=self.finish_inferred,
        )
        if reported_nothing(self.usage):
            result.usage = estimate_usage(*self.request, result)
        return result

    # -- one chunk -------------------------------------------------------------------

    def _chunk(self, chunk: Any) -> Iterator[StreamEvent]:
        self.model = field(chunk, "model") or self.model
        usage = field(chunk, "usage") or field(field(chunk, "x_groq"), "usage")
        if usage is not None:
            self._take_usage(usage)
        choices = field(chunk, "choices") or []
        if not isinstance(choices, list):
            raise self._shape_error(f"'choices' is {type(choices).__name__}, not a list")
        for choice in choices:
            if (field(choice, "index") or 0) != 0:
                continue
            yield from self._delta(field(choice, "delta"))
            reason = field(choice, "finish_reason")
            if reason:
                self.finish = str(reason)

    def _delta(self, delta: Any) -> Iterator[StreamEvent]:
        if delta is None:
            return
        if any(field(delta, name) for name in ("content", "reasoning_content", "reasoning", "refusal", "tool_calls")):
            self.delta_chunks += 1
        for name in ("reasoning_content", "reasoning"):
            reasoning = field(delta, name)
            if isinstance(reasoning, str) and reasoning:
                yield from self._thinking(reasoning)
                break
        content = field(delta, "content")
        if isinstance(content, str):
            if content:
                yield from self._end_thinking_if_field()
                yield from self._segments(self.splitter.feed(content))
        elif isinstance(content, list):
            yield from self._parts(content)
        elif content is not None:
            raise self._shape_error(f"'content' is {type(content).__name__}: {str(content)[:120]!r}")
        refusal = field(delta, "refusal")
        if isinstance(refusal, str) and refusal:
            self.refusal.append(refusal)
        for wire in field(delta, "tool_calls") or []:
            yield from self._end_thinking_if_field()
            yield from self._tool_delta(wire)

    def _parts(self, parts: list[Any]) -> Iterator[StreamEvent]:
        """``content`` as a list of typed parts (Mistral's thinking models)."""
        for part in parts:
            kind = field(part, "type")
            if not isinstance(part, dict) or not isinstance(kind, str):
                raise self._shape_error(f"a 'content' part is {str(part)[:120]!r}")
            if kind in _TEXT_PARTS:
                text = part.get("text")
                if isinstance(text, str) and text:
                    yield from self._end_thinking_if_field()
                    yield from self._segments(self.splitter.feed(text))
            elif kind in _THINKING_PARTS:
                text = _part_text(part.get(kind))
                if text:
                    yield from self._thinking(text)
            # other part types (references, images) carry no answer text

    def _segments(self, segments: list[Segment]) -> Iterator[StreamEvent]:
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
        fn = field(wire, "function")
        name = field(fn, "name") or ""
        fragment = field(fn, "arguments") or ""
        if not isinstance(fragment, str):  # some servers send the arguments as an object
            fragment = json.dumps(fragment)
        wire_id = field(wire, "id")
        index = field(wire, "index")
        ordinal = self.by_index.get(index)
        call = self.calls[ordinal] if ordinal is not None else None
        # Some servers send each parallel call whole with the same index; a new id
        # under a known index is a new call.
        if call is None or (wire_id and call["id"] and wire_id != call["id"]):
            ordinal = len(self.calls)
            self.by_index[index] = ordinal
            call = {"id": wire_id or "", "name": "", "args": "", "started": False}
            self.calls.append(call)
        if wire_id and not call["id"]:
            call["id"] = wire_id
        # A name normally arrives once (or in fragments); llama.cpp's server repeats the
        # whole name, with the id, in every chunk of the call: never append it twice.
        if name and name != call["name"]:
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
        prompt = _int(field(usage, "prompt_tokens"))
        completion = _int(field(usage, "completion_tokens"))
        total = _int(field(usage, "total_tokens"))
        cached = _int(field(field(usage, "prompt_tokens_details"), "cached_tokens"))
        cached = cached or _int(field(usage, "prompt_cache_hit_tokens"))  # DeepSeek's name
        reasoning = _int(field(field(usage, "completion_tokens_details"), "reasoning_tokens"))
        # OpenAI and DeepSeek count reasoning inside completion_tokens (total = prompt +
        # completion); xAI outside it (total = prompt + completion + reasoning).
        if reasoning and total >= prompt + completion + reasoning:
            completion += reasoning
        self.usage = Usage(
            input_tokens=max(prompt - cached, 0),
            output_tokens=completion,
            cache_read_tokens=min(cached, prompt),
        )

    def _shape_error(self, what: str) -> ProviderError:
        return ProviderError(
            f"the server at {self.server} sent a stream chunk of a shape this provider "
            f"does not understand ({what})",
            kind="stream",
            provider=self.provider,
        )


def _part_text(value: Any) -> str:
    """A thinking part's text: a string, or a list of text parts (Mistral)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(p.get("text") or "" for p in value if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _tool_call(call: dict[str, Any]) -> ToolCall:
    arguments, raw = parse_arguments(call["args"])
    call_id = call["id"] or f"call_{uuid.uuid4().hex[:24]}"
    return ToolCall(id=call_id, name=call["name"], arguments=arguments, raw_arguments=raw)


def _mark_truncated(call: ToolCall, raw: str) -> None:
    """The last call of an answer cut by ``length`` is truncated unless its JSON is whole."""
    if call.raw_arguments is not None or not raw.strip():
        call.arguments, call.raw_arguments, call.truncated = {}, raw, True
