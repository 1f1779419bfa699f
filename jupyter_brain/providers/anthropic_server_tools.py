"""Anthropic's server tools: the web search to offer, the server tools' blocks in an
answer (web search, tool search, code execution, the MCP connector), and those blocks sent
back.

An answer that used the ``web_search`` server tool holds blocks the client never runs:
``server_tool_use`` (the query), ``web_search_tool_result`` (pages, their content
encrypted) and text blocks with ``citations`` (``web_search_result_location``: url,
title, cited text). The API wants them back unchanged and in their order in the next
request, so the answer's blocks are kept as they came in the message's
``native_content``; ``ProviderResult.server_tools`` and ``.citations`` are their neutral
reading for the harness. Other providers never see them: they read ``content``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .anthropic_server_results import read_result
from .base import Message, ProviderResult, ServerToolUse, ToolSchema, WebCitation

WEB_SEARCH_TOOL_TYPE = "web_search_20250305"
DEFAULT_MAX_USES = 5
NATIVE = "anthropic"  # the ``provider`` tag of the native content this module writes and reads
SERVER_CALLS = ("server_tool_use", "mcp_tool_use")  # calls the API ran itself (MCP: its connector)


def web_search_tool(max_uses: int = DEFAULT_MAX_USES) -> ToolSchema:
    """The server tool as offered beside the function tools (``anthropic.wire_tools``
    sends it as it is)."""
    return {"type": WEB_SEARCH_TOOL_TYPE, "name": "web_search", "max_uses": max(1, int(max_uses))}


def as_dict(obj: Any) -> dict[str, Any]:
    """An SDK object (or a dict) as the plain dict the API sent."""
    if isinstance(obj, dict):
        return dict(obj)
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict())
    dump = getattr(obj, "model_dump", None)
    return dict(dump(exclude_unset=True)) if callable(dump) else dict(vars(obj))


def keep_block(block: dict[str, Any]) -> dict[str, Any] | None:
    """What of one answer block goes into the native content (None: nothing). Thinking is
    sent from ``ThinkingBlock``s; a ``tool_use`` keeps only its id (its call is in the
    message's ``tool_calls``); server tools' blocks are kept whole."""
    kind = block.get("type")
    if kind in ("thinking", "redacted_thinking"):
        return None
    if kind == "tool_use":  # with its caller: a call made by the server's code goes back as one
        kept = {"type": "tool_use", "id": block.get("id", "")}
        return {**kept, "caller": as_dict(block["caller"])} if block.get("caller") else kept
    if kind == "text":
        kept = {"type": "text", "text": block.get("text") or ""}
        if block.get("citations"):
            kept["citations"] = [as_dict(c) for c in block["citations"]]
        return kept
    if kind in SERVER_CALLS or (isinstance(kind, str) and kind.endswith("_tool_result")):
        return block
    return None  # e.g. a gateway's "fallback" marker: informational, never sent back


def _is_native(block: dict[str, Any]) -> bool:
    kind = block.get("type")
    return kind not in ("text", "tool_use") or bool(block.get("citations"))


def apply_native(result: ProviderResult, blocks: Iterable[dict[str, Any]]) -> ProviderResult:
    """Set the result's native content, server tools and citations when the answer's
    blocks (as ``keep_block`` keeps them, in order) hold any of Anthropic's own."""
    kept = list(blocks)
    if not any(_is_native(b) for b in kept):
        return result
    result.native_content = {"provider": NATIVE, "blocks": kept}
    result.server_tools = server_tools_of(kept)
    result.citations = citations_of(kept)
    return result


def server_tools_of(blocks: list[dict[str, Any]]) -> list[ServerToolUse]:
    """The server's own calls in an answer, each with its result read (``read_result``)."""
    uses: dict[str, ServerToolUse] = {}
    for block in blocks:
        kind = block.get("type")
        if kind in SERVER_CALLS:
            raw = block.get("input")
            uses[str(block.get("id", ""))] = ServerToolUse(
                id=str(block.get("id", "")), name=str(block.get("name", "")),
                input=raw if isinstance(raw, dict) else {},
            )
        elif isinstance(kind, str) and kind.endswith("_tool_result"):
            use = uses.get(str(block.get("tool_use_id", "")))
            if use is None:
                continue
            reading = read_result(block)
            use.results, use.error, use.summary = reading.results, reading.error, reading.summary
    return list(uses.values())


def citations_of(blocks: list[dict[str, Any]]) -> list[WebCitation]:
    return [
        WebCitation(url=str(c["url"]), title=str(c.get("title") or ""), cited_text=str(c.get("cited_text") or ""))
        for block in blocks if block.get("type") == "text"
        for c in block.get("citations") or ()
        if isinstance(c, dict) and c.get("type") == "web_search_result_location" and c.get("url")
    ]


def native_blocks(message: Message, tool_use: Callable[[dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The assistant message's blocks as the API sent them (copies), or None when it has
    none or was changed since (compaction, a note joined to its text): then its plain
    text goes instead, and the server blocks are left out together, which the API accepts.

    ``tool_use`` builds a ``tool_use`` block from one of the message's ``tool_calls``.
    Text blocks of only whitespace are left out (the API refuses them in a request).
    """
    native = message.get("native_content")
    if not isinstance(native, dict) or native.get("provider") != NATIVE or not isinstance(native.get("blocks"), list):
        return None
    blocks = [b for b in native["blocks"] if isinstance(b, dict)]
    text = "".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
    if text != str(message.get("content") or ""):
        return None
    calls = {str(c.get("id", "")): c for c in message.get("tool_calls") or []}
    if sorted(str(b.get("id", "")) for b in blocks if b.get("type") == "tool_use") != sorted(calls):
        return None
    wire: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_use":
            call_block = tool_use(calls[str(block.get("id", ""))])
            wire.append({**call_block, "caller": dict(block["caller"])} if block.get("caller") else call_block)
        elif kind == "text" and not block.get("citations") and not str(block.get("text") or "").strip():
            continue
        else:
            wire.append(dict(block))
    return wire
