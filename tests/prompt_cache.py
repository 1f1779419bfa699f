"""A model of Anthropic's prompt cache for the mock Messages server.

What the API documents, and what this reproduces: the prompt is the sequence tools →
system → messages, cut into content blocks; a block with ``cache_control`` is a
breakpoint; a request reads the longest cached prefix found at a breakpoint or at one of
the 20 block boundaries before it, writes the prefix up to its last breakpoint, and
pays full price for the rest. Prefixes shorter than the model's minimum (1,024 tokens)
are not cached. Usage comes back as ``input_tokens`` (uncached, after the last
breakpoint or not found), ``cache_read_input_tokens`` and ``cache_creation_input_tokens``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from typing import Any

LOOKBACK_BLOCKS = 20
MIN_CACHEABLE_TOKENS = 1024


def _blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """(canonical text of a block, is it a breakpoint), in prompt order."""
    out: list[tuple[str, bool]] = []

    def add(prefix: str, block: Any) -> None:
        if isinstance(block, dict):
            marked = "cache_control" in block
            clean = {k: v for k, v in block.items() if k != "cache_control"}
        else:
            marked, clean = False, block
        out.append((prefix + json.dumps(clean, sort_keys=True, ensure_ascii=False), marked))

    for tool in body.get("tools") or []:
        add("tool:", tool)
    system = body.get("system")
    if isinstance(system, str):
        add("system:", {"type": "text", "text": system})
    else:
        for block in system or []:
            add("system:", block)
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            add(f"{message.get('role')}:", block)
    return out


class PromptCache:
    """Shared across requests of one mock server; thread-safe."""

    def __init__(self, count: Callable[[str], int], *, min_tokens: int = MIN_CACHEABLE_TOKENS) -> None:
        self._count = count
        self._min = min_tokens
        self._stored: set[str] = set()
        self._lock = threading.Lock()

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        blocks = _blocks(body)
        tokens = [self._count(text) for text, _ in blocks]
        hashes: list[str] = []
        h = hashlib.sha256(str(body.get("model", "")).encode())
        for text, _ in blocks:
            h = h.copy()
            h.update(text.encode())
            hashes.append(h.hexdigest())
        cumulative = []
        total = 0
        for t in tokens:
            total += t
            cumulative.append(total)
        breakpoints = [i for i, (_, marked) in enumerate(blocks) if marked]
        with self._lock:
            read_end = -1  # index of the last block read from the cache
            for bp in breakpoints:
                for i in range(bp, max(-1, bp - LOOKBACK_BLOCKS - 1), -1):
                    if hashes[i] in self._stored:
                        read_end = max(read_end, i)
                        break
            write_end = breakpoints[-1] if breakpoints else -1
            for bp in breakpoints:
                if cumulative[bp] >= self._min:
                    self._stored.add(hashes[bp])
        read = cumulative[read_end] if read_end >= 0 else 0
        written_to = cumulative[write_end] if write_end >= 0 and cumulative[write_end] >= self._min else read
        creation = max(0, written_to - read)
        return {
            "input_tokens": total - read - creation,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": creation,
        }
