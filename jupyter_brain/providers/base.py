"""The provider contract: what the harness asks of any model backend.

Messages are provider-neutral dicts (see ``Message`` below); each provider maps them to
its own wire format. Keeping one neutral shape is what lets a session switch provider
between cells and lets the event log replay a turn without knowing the backend.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, PrivateAttr

# A neutral message is a plain dict, one of:
#   {"role": "system", "content": str}                  ("kind": one of FRESH_CONTEXT_KINDS
#                                                        marks context rendered fresh for
#                                                        this request — the workspace,
#                                                        memories, a context pack — which a
#                                                        provider places after its cached
#                                                        prefix)
#   {"role": "user", "content": str}
#   {"role": "assistant", "content": str,
#        "thinking": [ThinkingBlock-as-dict, ...],          (optional)
#        "tool_calls": [{"id", "name", "arguments": dict}],  (optional)
#        "native_content": {"provider": "anthropic", "blocks": [...]}}  (optional: the answer's
#                                                        blocks as that provider sent them, when
#                                                        it ran server tools (web search); only
#                                                        that provider reads them, others read
#                                                        "content")
#   {"role": "tool", "tool_call_id": str, "name": str, "content": str, "is_error": bool,
#        "images": [{"media_type": "image/png", "data": <base64>}, ...]}  (optional: figures
#                                                        the tool made; a provider sends them
#                                                        as images where the model takes
#                                                        them, else a short text note)
Message = dict[str, Any]

# System messages built fresh for each request (never stored in the history).
FRESH_CONTEXT_KINDS = frozenset({"workspace", "memory", "context_pack", "runtime", "skill", "hook",
                                 "agents_md", "skills"})


def is_fresh_context(message: Message) -> bool:
    """A system message rendered for this request only (see FRESH_CONTEXT_KINDS)."""
    return message.get("kind") in FRESH_CONTEXT_KINDS


def close_stream(stream: Any) -> None:
    """Close a provider's event stream if it can be (generators and SDK streams can), so an
    abandoned call releases its connection; a failure to close is not the caller's."""
    close = getattr(stream, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # noqa: BLE001 - the call is over either way
            pass

# What a model reads instead of a tool's image when it does not take images.
NO_IMAGES_NOTE = "[the figure is not shown: this model does not take images]"

# A tool schema offered to the model: {"name": str, "description": str,
# "input_schema": <JSON schema of the arguments object>}. A provider's server tool (run on
# its servers, e.g. Anthropic's web search) has a "type" and no "input_schema": it comes
# from that provider (``capabilities.ServerWebSearch``) and other providers skip it.
ToolSchema = dict[str, Any]


def is_server_tool(schema: ToolSchema) -> bool:
    """A provider-run tool (see ``ToolSchema``), sent as it is, never executed here."""
    return "type" in schema and "input_schema" not in schema


class Usage(BaseModel):
    """Token usage of one model call.

    ``input_tokens`` counts only input that was *not* read from or written to the prompt
    cache (Anthropic's convention). Providers whose API reports a total (OpenAI's
    ``prompt_tokens``) subtract the cached part, so costs add up the same everywhere.
    ``output_tokens`` includes reasoning, also where a server reports it outside its
    completion count (xAI).

    ``estimated`` is True when the server reported no usage and the figures were counted
    locally with the tokenizer. It is deliberately not a model field: the harness treats
    ``Usage.model_fields`` as the token counters it sums and reports (``UsageEvent`` forbids
    extra keys); it is set with ``Usage(..., estimated=True)`` and survives ``+``.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    _estimated: bool = PrivateAttr(default=False)

    def __init__(self, *, estimated: bool | int = False, **data: Any) -> None:
        super().__init__(**data)
        self._estimated = bool(estimated)

    @property
    def estimated(self) -> bool:
        # Read from pydantic's private store directly: ``self._estimated`` goes through
        # ``BaseModel.__getattr__``, and this is read for every model call.
        return self.__pydantic_private__["_estimated"]  # type: ignore[index]

    @estimated.setter
    def estimated(self, value: bool) -> None:
        self._estimated = bool(value)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_creation_tokens=self.cache_creation_tokens + other.cache_creation_tokens,
            estimated=self.estimated or other.estimated,
        )

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_creation_tokens


class ThinkingBlock(BaseModel):
    """Model reasoning. Signed blocks must go back to the API unchanged in the tool loop."""

    text: str = ""
    signature: str | None = None
    redacted: bool = False
    data: str | None = None  # opaque payload of a redacted block


class ToolCall(BaseModel):
    """One tool call the model asked for.

    ``raw_arguments`` is set when the streamed argument JSON did not parse into an object;
    ``arguments`` is then ``{}``. ``truncated`` is True when the stream stopped inside
    this call (``max_tokens`` / ``length``): ``raw_arguments`` holds the partial JSON
    (possibly ``""``) and the call must never be executed; the model should be told its
    arguments were cut off.
    """

    id: str
    name: str
    arguments: Any = Field(default_factory=dict)
    raw_arguments: str | None = None
    truncated: bool = False


class WebCitation(BaseModel):
    """A passage of the answer and the web page it cites (a server web search's citation)."""

    url: str
    title: str = ""
    cited_text: str = ""


class ServerToolUse(BaseModel):
    """A tool the provider ran on its own servers during the call (Anthropic's web search,
    tool search, code execution): what it was asked and what came back (``results``: a web
    search's ``{url, title, page_age}``; ``summary``: a short reading of any result, for the
    timeline). Never run by us, never answered by us."""

    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    results: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None
    summary: str = ""


# "refusal": the model (or the API's safety layer) declined; ``ProviderResult.refusal``
# holds the reason, ``text`` whatever was streamed before it.
StopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "error", "other"
]


class ProviderResult(BaseModel):
    text: str = ""
    thinking: list[ThinkingBlock] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    stop_reason: StopReason = "end_turn"
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    # Set iff stop_reason == "refusal": OpenAI's streamed ``refusal`` text, Anthropic's
    # ``stop_details.explanation`` (or a short note when the API gave none).
    refusal: str | None = None
    # Server tools (web search): what ran, the answer's citations, and the provider's own
    # blocks to send back unchanged (``native_content`` of the message). Empty otherwise.
    server_tools: list[ServerToolUse] = Field(default_factory=list)
    citations: list[WebCitation] = Field(default_factory=list)
    native_content: dict[str, Any] | None = None
    # The server sent no finish_reason (tinyq4: ``[DONE]`` alone): ``stop_reason`` was
    # inferred from the answer's length (``providers/stream_end.py``).
    stop_reason_inferred: bool = False

    def to_message(self) -> Message:
        """The assistant message this result adds to history."""
        msg: Message = {"role": "assistant", "content": self.text}
        if self.thinking:
            msg["thinking"] = [b.model_dump(exclude_defaults=True) for b in self.thinking]
        if self.tool_calls:
            msg["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.native_content:
            msg["native_content"] = self.native_content
        return msg


StreamEventType = Literal[
    "text",  # text delta
    "thinking",  # thinking delta
    "thinking_end",  # a thinking block is complete (signature, if any, in `signature`)
    "tool_call_start",  # a tool call begins: id, name, index
    "tool_call_args",  # a fragment of the tool call's argument JSON
    "done",  # the complete ProviderResult
]


class StreamEvent(BaseModel):
    type: StreamEventType
    text: str = ""
    index: int = 0
    tool_call_id: str | None = None
    name: str | None = None
    signature: str | None = None
    result: ProviderResult | None = None


ProviderErrorKind = Literal[
    "auth",  # missing or rejected key
    "rate_limit",  # 429 after retries
    "overloaded",  # 529 / overloaded_error
    "server",  # 5xx
    "bad_request",  # 4xx the request itself is wrong
    "timeout",
    "connection",  # refused or dropped
    "stream",  # an error event or malformed data mid-stream
    "other",
]


class ProviderError(Exception):
    """A model call failed. The harness ends the step with a clear error, never a traceback."""

    def __init__(
        self,
        message: str,
        *,
        kind: ProviderErrorKind = "other",
        status_code: int | None = None,
        retryable: bool = False,
        provider: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status_code = status_code
        self.retryable = retryable
        self.provider = provider

    def __str__(self) -> str:
        where = f"{self.provider} " if self.provider else ""
        code = f" (HTTP {self.status_code})" if self.status_code else ""
        return f"{where}{self.kind} error{code}: {self.message}"


@runtime_checkable
class LLMProvider(Protocol):
    """Anything that can answer a list of neutral messages, optionally streaming."""

    name: str
    model: str

    def generate(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        timeout_s: float = 60.0,
        thinking_budget: int = 0,
    ) -> ProviderResult: ...

    def generate_stream(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        timeout_s: float = 60.0,
        thinking_budget: int = 0,
    ) -> Iterator[StreamEvent]: ...


class StreamingProvider:
    """Base for providers whose API is a stream: ``generate`` drains ``generate_stream``."""

    def generate(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        timeout_s: float = 60.0,
        thinking_budget: int = 0,
    ) -> ProviderResult:
        return collect_stream(
            self.generate_stream(messages, tools, timeout_s=timeout_s, thinking_budget=thinking_budget)  # type: ignore[attr-defined]
        )


def collect_stream(events: Iterator[StreamEvent]) -> ProviderResult:
    """Drain a stream and return its final result (for callers that do not stream)."""
    for event in events:
        if event.type == "done" and event.result is not None:
            return event.result
    raise ProviderError("stream ended without a final result", kind="stream")


def split_system(messages: list[Message]) -> tuple[str, list[Message]]:
    """Join all system messages into one prompt and return the rest in order."""
    system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
    return system, [m for m in messages if m.get("role") != "system"]
