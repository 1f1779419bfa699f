"""What a model request *means*, as a hash: two requests with the same fingerprint ask
the model the same thing, so a recorded answer to one answers the other.

Covered (canonical JSON, sha256): the conversation the model reads — the history, this
turn's prompt, every assistant message (text, thinking text, tool calls) and every tool
result (text, error flag, how many images) —, the system layers that carry meaning
(memories, a context pack, a skill, the AGENTS.md and the Agent Skills' index, a hook's
layer, a reflection or summary request), the names of the tools offered, the thinking budget and the cell's flags that change the
request (think, strategy, provider, model … ``REQUEST_FLAGS``).

Left out, because they change without changing the question: the system prompt itself
(it follows from the flags, and names the working folder), the ``runtime`` layer (today's
date, the Python version) and the ``workspace`` layer (the folder listing, variables);
tool-call ids (renumbered in order of appearance), thinking signatures, a provider's own
blocks (``native_content``), image bytes (a figure's PNG differs by machine) and object
addresses in tool results (``<function f at 0x7f…>``).

Masked first: a secret (an API key the model echoed, a token in a tool result) is hashed
as ``[REDACTED]``, as the saved recording holds it, so a turn recorded with the key in its
history still matches when that history comes back masked (issue #39).

Besides the whole fingerprint, a request has short ``parts`` (flags, tools, history,
prompt, each tool result) so that a mismatch can say *what* changed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...foundation.redact import redact_value

Message = dict[str, Any]

VOLATILE_KINDS = frozenset({"workspace", "runtime"})  # fresh layers left out: date, folder listing
_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{4,}")  # a repr's object address: new in every kernel
PART_CHARS = 16  # a part's hash is short: it only has to tell versions of one request apart


def canonical_json(value: Any) -> str:
    """One spelling of a JSON value: sorted keys, no spaces, non-JSON values as strings."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def digest(value: Any, chars: int | None = None) -> str:
    text = hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
    return text[:chars] if chars else text


@dataclass(frozen=True)
class RequestFingerprint:
    """A request's fingerprint (``value``) and its parts (short hashes)."""

    value: str
    parts: dict[str, Any] = field(default_factory=dict)


class _Ids:
    """Tool-call ids renumbered in order of appearance (``c1``, ``c2`` …): providers make
    them up anew on every run."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, raw: Any) -> str:
        key = str(raw)
        if key not in self.seen:
            self.seen[key] = f"c{len(self.seen) + 1}"
        return self.seen[key]


def _meaningful(message: Message) -> bool:
    if message.get("role") != "system":
        return True
    kind = message.get("kind")
    return kind is not None and kind not in VOLATILE_KINDS  # the main system prompt has no kind


def _normalized(message: Message, ids: _Ids) -> dict[str, Any]:
    role = message.get("role")
    out: dict[str, Any] = {"role": role, "content": message.get("content", "")}
    if role == "system":
        out["kind"] = message.get("kind")
    if role == "assistant":
        thinking = [str(b.get("text", "")) for b in message.get("thinking") or [] if isinstance(b, Mapping)]
        if any(thinking):
            out["thinking"] = thinking
        calls = message.get("tool_calls") or []
        if calls:
            out["tool_calls"] = [{"id": ids(c.get("id")), "name": c.get("name"), "arguments": c.get("arguments")}
                                 for c in calls]
    if role == "tool":
        out["content"] = _ADDRESS.sub("at 0x…", str(out["content"]))
        out.update(id=ids(message.get("tool_call_id")), name=message.get("name"),
                   is_error=bool(message.get("is_error")), images=len(message.get("images") or []))
    return out


def _prompt_index(messages: Sequence[dict[str, Any]]) -> int:
    """The turn's prompt: the last user message (tool results are ``tool`` messages)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i]["role"] == "user":
            return i
    return len(messages)


def fingerprint(messages: Sequence[Message], tools: Sequence[Mapping[str, Any]], *,
                flags: Mapping[str, Any] | None = None, thinking_budget: int = 0,
                redact: Callable[[str], str] | None = None) -> RequestFingerprint:
    """The fingerprint of one request (see the module's docstring for what it covers);
    ``redact`` masks its text first (a recording stores masked text)."""
    ids = _Ids()
    normalized = [_normalized(m, ids) for m in messages if _meaningful(m)]
    if redact is not None:
        normalized = redact_value(normalized, redact)
    tool_names = sorted(str(t.get("name") or t.get("type") or "") for t in tools)
    flag_values = dict(flags or {})
    whole = {"flags": flag_values, "tools": tool_names, "thinking_budget": thinking_budget, "messages": normalized}
    at = _prompt_index(normalized)
    results = [[m.get("name"), digest([m["content"], m["is_error"], m["images"]], PART_CHARS)]
               for m in normalized[at + 1:] if m["role"] == "tool"]
    parts = {
        "flags": digest([flag_values, thinking_budget], PART_CHARS),
        "tools": digest(tool_names, PART_CHARS),
        "history": digest(normalized[:at], PART_CHARS),
        "prompt": digest(normalized[at:at + 1], PART_CHARS),
        "results": results,
    }
    return RequestFingerprint(digest(whole), parts)


def what_changed(recorded: Mapping[str, Any], current: Mapping[str, Any],
                 flags: Mapping[str, Any] | None = None, recorded_flags: Mapping[str, Any] | None = None) -> str:
    """In words, how a request differs from the recorded one (from their ``parts``)."""
    if recorded.get("prompt") != current.get("prompt"):
        return "the prompt changed"
    if recorded.get("flags") != current.get("flags"):
        names = sorted(k for k in {*(flags or {}), *(recorded_flags or {})}
                       if (flags or {}).get(k) != (recorded_flags or {}).get(k))
        return f"the flags changed ({', '.join(names)})" if names else "the flags changed"
    if recorded.get("history") != current.get("history"):
        return "the history before this cell changed"
    old, new = list(recorded.get("results") or []), list(current.get("results") or [])
    for n, (was, now) in enumerate(zip(old, new, strict=False), start=1):
        if was != now:
            return f"the result of tool call {n} ({now[0]}) changed"
    if len(old) != len(new):
        return f"the turn made {len(new)} tool calls where the recording made {len(old)}"
    if recorded.get("tools") != current.get("tools"):
        return "the tools offered changed"
    return "the request changed (a context layer: memories, context pack, skill or a hook's)"
