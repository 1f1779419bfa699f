"""A server tool's result block read for the timeline: what it found, in a few lines.

Anthropic's server tools answer in ``*_tool_result`` blocks of their own shapes: web
search (a list of pages), tool search (``tool_references``: the deferred tools it
loaded), code execution and its bash variant (stdout, stderr, return code), the text
editor of code execution, web fetch (a document), the MCP connector (content blocks).
A failure is a ``*_error`` content with an ``error_code``. A shape not known here is
named by its type, never an exception: the block itself still goes back unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_LINES = 20  # of a program's output shown on the timeline
MAX_CHARS = 2000


@dataclass
class ResultReading:
    summary: str = ""
    results: list[dict[str, Any]] = field(default_factory=list)  # a web search's pages
    error: str | None = None


def read_result(block: dict[str, Any]) -> ResultReading:
    """One ``*_tool_result`` (or ``mcp_tool_result``) block, read."""
    content = block.get("content")
    if isinstance(content, list):
        return _listed(content, is_error=bool(block.get("is_error")))
    if not isinstance(content, dict):
        return ResultReading(summary=_short(str(content or "")))
    kind = str(content.get("type") or "")
    if kind.endswith("_error") or "error_code" in content:
        return ResultReading(error=str(content.get("error_code") or kind or "error"))
    if "tool_references" in content:
        names = [str(r.get("tool_name", "")) for r in content.get("tool_references") or () if isinstance(r, dict)]
        found = f"found {len(names)} tool{'s' * (len(names) != 1)}: {', '.join(names)}" if names else "found no tools"
        return ResultReading(summary=found)
    if "stdout" in content or "return_code" in content:
        return ResultReading(summary=_program_output(content))
    if kind == "web_fetch_result":
        document = content.get("content")
        title = str(document.get("title") or "") if isinstance(document, dict) else ""
        return ResultReading(summary=f"fetched {content.get('url', '')}" + (f" ({title})" if title else ""))
    text = content.get("content") if isinstance(content.get("content"), str) else content.get("text")
    name = kind.removeprefix("text_editor_code_execution_").removesuffix("_result") or "result"
    return ResultReading(summary=name + (f"\n{_short(text)}" if isinstance(text, str) and text else ""))


def _listed(content: list[Any], *, is_error: bool) -> ResultReading:
    pages: list[dict[str, Any]] = [
        {"url": str(r.get("url", "")), "title": str(r.get("title") or ""), "page_age": r.get("page_age")}
        for r in content if isinstance(r, dict) and r.get("url")
    ]
    if pages or not content:
        lines = [f"[{i}] {' '.join(str(p['title']).split()) or p['url']} — {p['url']}" for i, p in enumerate(pages, 1)]
        count = f"{len(pages)} result{'s' * (len(pages) != 1)}" if pages else "no results"
        return ResultReading(summary="\n".join([count, *lines]), results=pages)
    text = _short("\n".join(str(c.get("text") or "") for c in content if isinstance(c, dict)))
    return ResultReading(error=text or "error") if is_error else ResultReading(summary=text)


def _program_output(content: dict[str, Any]) -> str:
    parts = [f"return code {content.get('return_code', '?')}"]
    if content.get("stdout"):
        parts.append(_short(str(content["stdout"])))
    if content.get("stderr"):
        parts.append("stderr: " + _short(str(content["stderr"])))
    return "\n".join(parts)


def _short(text: str) -> str:
    lines = text.strip().splitlines()
    kept = "\n".join(lines[:MAX_LINES])[:MAX_CHARS]
    return kept + ("\n…" if len(lines) > MAX_LINES or len(kept) < len("\n".join(lines[:MAX_LINES])) else "")
