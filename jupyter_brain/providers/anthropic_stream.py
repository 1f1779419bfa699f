"""Assemble a Messages-API event stream into StreamEvents and one ``ProviderResult``.

Shapes met in real streams, not only in the API reference:

- the final event can arrive without its terminating blank line, so the SDK never
  delivers ``message_stop``; a ``message_delta`` that carried the stop reason already
  makes the message complete (the SDK's own accumulator accepts it the same way);
- a gateway that splices in a fallback sends a second ``message_start`` in one stream
  while the first message is still open: the earlier attempt's blocks are dropped, so no
  half-streamed tool call survives; the same ``message_start`` repeated is ignored;
- server tools (tool search, programmatic tool calling with code execution) send further
  messages in one response: a ``message_start`` after the last message ended continues
  the same answer (``_on_message_start``): its blocks are added after the earlier ones
  (their indexes start at 0 again), blocks it already holds (a deferred tool call) are
  read as whole blocks, and the text streamed is the text the result holds;
- a stream cut by ``max_tokens`` inside a ``tool_use`` block leaves that block open:
  the call is returned with ``truncated=True`` and its partial JSON, never as a call
  with empty arguments;
- ``stop_reason: "refusal"`` (with ``stop_details`` on newer models) becomes
  ``stop_reason="refusal"`` with ``ProviderResult.refusal`` set;
- server tools (web search) and their results are blocks of other types; their text
  answer arrives in ordinary text blocks, with ``citations_delta``s before the text they
  support. The answer's blocks are kept in order for the next request
  (``anthropic_server_tools``); ``stop_reason: "pause_turn"`` (a long server-tool turn
  paused) is ``paused``: the provider sends the answer back to let it go on.

``result_from_message`` reads a whole (non-streaming) response the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any

from jupyter_brain.providers.anthropic_server_tools import SERVER_CALLS, apply_native, as_dict, keep_block
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
from jupyter_brain.providers.usage_estimate import estimate_usage, reported_nothing

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}
REFUSAL_NOTE = "the model declined to answer this request (stop_reason: refusal)"
_USAGE_FIELDS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_input_tokens": "cache_read_tokens",
    "cache_creation_input_tokens": "cache_creation_tokens",
}


class StreamAssembler:
    """Turns raw Messages-API stream events into StreamEvents and a final result.

    ``messages`` / ``tools`` (the request) are only used to estimate usage when the
    stream reported none (a proxy that strips it).
    """

    def __init__(
        self,
        model: str,
        messages: list[Message] | None = None,
        tools: list[ToolSchema] | None = None,
    ) -> None:
        self.model = model
        self.request = (messages or [], tools or [])
        self.started = False
        self.message_id: str | None = None
        self.message_no = 0  # messages this response continued over (server tools)
        self._reset()

    def _reset(self) -> None:
        # keyed by (message number, block index): each message numbers its blocks from 0
        self.blocks: dict[tuple[int, int], dict[str, Any]] = {}
        self.text: list[str] = []
        self.thinking: list[ThinkingBlock] = []
        self.tool_calls: list[ToolCall] = []
        self.usage = Usage()
        self.stop_reason: StopReason = "end_turn"
        self.stop_seen = False  # a message_delta carried the stop reason
        self.refusal: str | None = None
        self.finished = False
        self.paused = False  # stop_reason "pause_turn": send the answer back to go on

    def run(self, events: Iterator[Any]) -> Iterator[StreamEvent]:
        try:
            for event in events:
                handler = getattr(self, "_on_" + str(getattr(event, "type", "")), None)
                if handler is not None:
                    yield from handler(event)
        except (TypeError, AttributeError, KeyError, ValueError) as err:
            raise ProviderError(
                f"the stream held an event of a shape this provider does not understand "
                f"({type(err).__name__}: {err})",
                kind="stream",
                provider="anthropic",
            ) from None
        if not (self.finished or self.stop_seen):
            raise ProviderError(
                "the connection closed before the response was complete (no message_stop)",
                kind="connection",
                retryable=True,
                provider="anthropic",
            )
        yield StreamEvent(type="done", result=self.result())

    def result(self) -> ProviderResult:
        self._close_open_tool_calls()
        result = ProviderResult(
            text="".join(self.text),
            thinking=self.thinking,
            tool_calls=self.tool_calls,
            stop_reason=self.stop_reason,
            usage=self.usage,
            model=self.model,
            refusal=self.refusal,
        )
        apply_native(result, self.content_blocks())
        if reported_nothing(self.usage):
            result.usage = estimate_usage(*self.request, result)
        return result

    # -- events ----------------------------------------------------------------------

    def _on_message_start(self, event: Any) -> Iterator[StreamEvent]:
        message = event.message
        message_id = getattr(message, "id", None)
        if self.started and not (self.finished or self.stop_seen):  # the message is still open
            if message_id and message_id == self.message_id:
                return  # the same message_start repeated (a gateway quirk): nothing new
            self._reset()  # a spliced-in second attempt: its blocks replace the first's
            self._take_usage(getattr(message, "usage", None))
        elif self.started:
            # The response goes on in another message (server tools). Usage follows the
            # anthropic SDK's accumulator (lib/streaming/_messages.py ``accumulate_event``):
            # it ignores a later message_start (its usage included), and each
            # message_delta's cumulative figures overwrite the ones before. Its blocks we
            # do not follow: the SDK indexes them into the first message's list.
            self.message_no += 1
            self.finished = self.stop_seen = self.paused = False
        else:
            self._take_usage(getattr(message, "usage", None))
        self.started = True
        self.message_id = message_id
        self.model = getattr(message, "model", None) or self.model
        reason = getattr(message, "stop_reason", None)
        if reason:  # a message that came whole (a deferred tool call) says its stop reason here
            self.stop_reason = STOP_REASONS.get(reason, "other")
            self.stop_seen = True
        for position, block in enumerate(getattr(message, "content", None) or ()):
            yield from self._whole_block((self.message_no, -1 - position), block)

    def _whole_block(self, key: tuple[int, int], block: Any) -> Iterator[StreamEvent]:
        """A block the message_start already holds whole: started, its input given, stopped."""
        yield from self._start_block(key, block)
        yield from self._on_content_block_stop(SimpleNamespace(index=key[1]))

    def _on_content_block_start(self, event: Any) -> Iterator[StreamEvent]:
        return self._start_block((self.message_no, event.index), event.content_block)

    def _start_block(self, key: tuple[int, int], block: Any) -> Iterator[StreamEvent]:
        state: dict[str, Any] = {"type": block.type}
        self.blocks[key] = state
        if block.type == "text":
            state.update(text=block.text or "", citations=[as_dict(c) for c in getattr(block, "citations", None) or ()])
            if block.text:
                self.text.append(block.text)
                yield StreamEvent(type="text", text=block.text)
        elif block.type == "thinking":
            state.update(text=block.thinking or "", signature=block.signature or None)
            state["ordinal"] = len(self.thinking)
            if block.thinking:
                yield StreamEvent(type="thinking", text=block.thinking, index=state["ordinal"])
        elif block.type == "redacted_thinking":
            # complete at its start (it has no deltas): kept even if its stop never arrives
            self.thinking.append(ThinkingBlock(redacted=True, data=block.data))
            yield StreamEvent(type="thinking_end", index=len(self.thinking) - 1)
        elif block.type == "tool_use":
            state.update(id=block.id, name=block.name, json="", ordinal=len(self.tool_calls))
            if getattr(block, "caller", None) is not None:  # programmatic tool calling: who called it
                state["caller"] = as_dict(block.caller)
            self.tool_calls.append(ToolCall(id=block.id, name=block.name))
            yield StreamEvent(
                type="tool_call_start",
                tool_call_id=block.id,
                name=block.name,
                index=state["ordinal"],
            )
            given = getattr(block, "input", None)
            if given:  # a call the server's code made comes whole, its input at the start
                state["json"] = json.dumps(given)
                yield StreamEvent(type="tool_call_args", text=state["json"], tool_call_id=block.id,
                                  name=block.name, index=state["ordinal"])
        elif block.type in SERVER_CALLS:
            state.update(block=as_dict(block), json="")
        else:  # a server tool's result (complete at its start) or another block to send back
            state["block"] = as_dict(block)

    def _on_content_block_delta(self, event: Any) -> Iterator[StreamEvent]:
        state = self.blocks.get((self.message_no, event.index))
        delta = event.delta
        if state is None:
            return
        if delta.type == "text_delta" and state["type"] == "text":
            state["text"] += delta.text
            self.text.append(delta.text)
            yield StreamEvent(type="text", text=delta.text)
        elif delta.type == "citations_delta" and state["type"] == "text":
            state["citations"].append(as_dict(delta.citation))
        elif delta.type == "input_json_delta" and state["type"] in SERVER_CALLS:
            state["json"] += delta.partial_json
        elif delta.type == "thinking_delta" and state["type"] == "thinking":
            state["text"] += delta.thinking
            if delta.thinking:
                yield StreamEvent(type="thinking", text=delta.thinking, index=state["ordinal"])
        elif delta.type == "signature_delta" and state["type"] == "thinking":
            state["signature"] = delta.signature
        elif delta.type == "input_json_delta" and state["type"] == "tool_use":
            state["json"] += delta.partial_json
            if delta.partial_json:
                yield StreamEvent(
                    type="tool_call_args",
                    text=delta.partial_json,
                    tool_call_id=state["id"],
                    name=state["name"],
                    index=state["ordinal"],
                )

    def _on_content_block_stop(self, event: Any) -> Iterator[StreamEvent]:
        state = self.blocks.get((self.message_no, event.index))
        if state is None or state.get("closed"):
            return
        state["closed"] = True
        if state["type"] == "thinking":
            self.thinking.append(ThinkingBlock(text=state["text"], signature=state["signature"]))
            yield StreamEvent(
                type="thinking_end", signature=state["signature"], index=state["ordinal"]
            )
        elif state["type"] == "tool_use":
            arguments, raw = parse_arguments(state["json"])
            call = self.tool_calls[state["ordinal"]]
            call.arguments, call.raw_arguments = arguments, raw

    def _on_message_delta(self, event: Any) -> Iterator[StreamEvent]:
        delta = event.delta
        reason = getattr(delta, "stop_reason", None)
        if reason:
            self.stop_reason = STOP_REASONS.get(reason, "other")
            self.stop_seen = True
            self.paused = reason == "pause_turn"
            if reason == "refusal":
                details = getattr(delta, "stop_details", None)
                explanation = getattr(details, "explanation", None)
                self.refusal = explanation if isinstance(explanation, str) and explanation else REFUSAL_NOTE
        self._take_usage(getattr(event, "usage", None))
        return iter(())

    def _on_message_stop(self, event: Any) -> Iterator[StreamEvent]:
        self.finished = True
        return iter(())

    # -- helpers ---------------------------------------------------------------------

    def content_blocks(self) -> list[dict[str, Any]]:
        """The answer's blocks in order, as ``keep_block`` keeps them for the next request."""
        kept = []
        for state in self.blocks.values():
            kind = state["type"]
            if kind == "text":
                block: dict[str, Any] = {"type": "text", "text": state["text"], "citations": state["citations"]}
            elif kind == "tool_use":
                block = {"type": "tool_use", "id": state["id"], **({"caller": state["caller"]} if "caller" in state else {})}
            elif kind in SERVER_CALLS:
                arguments, _ = parse_arguments(state["json"])
                block = {**state["block"], "input": arguments if state["json"] else state["block"].get("input", {})}
            elif "block" in state:
                block = state["block"]
            else:
                continue
            item = keep_block(block)
            if item is not None:
                kept.append(item)
        return kept

    def _close_open_tool_calls(self) -> None:
        """A tool_use block the stream never closed was cut off (max_tokens): mark it."""
        for state in self.blocks.values():
            if state["type"] != "tool_use" or state.get("closed"):
                continue
            state["closed"] = True
            call = self.tool_calls[state["ordinal"]]
            call.arguments, call.raw_arguments, call.truncated = {}, state["json"], True
        if self.stop_reason == "max_tokens" and self.tool_calls:
            last = self.tool_calls[-1]
            if last.raw_arguments is not None:  # closed, but its JSON is incomplete
                last.truncated = True

    def _take_usage(self, usage: Any) -> None:
        """Stream usage figures are cumulative: overwrite, and keep values a delta omits."""
        if usage is None:
            return
        for wire, ours in _USAGE_FIELDS.items():
            value = getattr(usage, wire, None)
            if value is not None:
                setattr(self.usage, ours, int(value))


def result_from_message(message: Mapping[str, Any] | Any, model: str = "") -> ProviderResult:
    """A whole Messages-API response (not streamed) as a ``ProviderResult``."""
    data = as_dict(message)
    text: list[str] = []
    thinking: list[ThinkingBlock] = []
    calls: list[ToolCall] = []
    kept: list[dict[str, Any]] = []
    for raw in data.get("content") or []:
        block = as_dict(raw)
        kind = block.get("type")
        if kind == "text":
            text.append(block.get("text") or "")
        elif kind == "thinking":
            thinking.append(ThinkingBlock(text=block.get("thinking") or "", signature=block.get("signature") or None))
        elif kind == "redacted_thinking":
            thinking.append(ThinkingBlock(redacted=True, data=block.get("data")))
        elif kind == "tool_use":
            arguments = block.get("input")
            calls.append(ToolCall(id=str(block.get("id", "")), name=str(block.get("name", "")),
                                  arguments=arguments if isinstance(arguments, dict) else {}))
        item = keep_block(block)
        if item is not None:
            kept.append(item)
    reason = str(data.get("stop_reason") or "end_turn")
    usage = Usage(**{ours: int(as_dict(data.get("usage") or {}).get(wire) or 0) for wire, ours in _USAGE_FIELDS.items()})
    refusal = None
    if reason == "refusal":
        details = as_dict(data.get("stop_details") or {})
        refusal = str(details.get("explanation") or "") or REFUSAL_NOTE
    result = ProviderResult(text="".join(text), thinking=thinking, tool_calls=calls,
                            stop_reason=STOP_REASONS.get(reason, "other"), usage=usage,
                            model=str(data.get("model") or model) or None, refusal=refusal)
    return apply_native(result, kept)
