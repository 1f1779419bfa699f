"""Citations (``run_turn(show_citations=True)``): the answer's sources, listed at its end.

Local sources are workspace anchors (``file:line``, ``notebook.ipynb#cell-3``,
``variable:name``):

- context pack passages the answer used. Which ones cannot be known for sure, so the rule
  is: a passage is used when the answer names its anchor, quotes one of its lines, or
  names its file (when the answer names no anchor of that file); when the answer points
  at none of them, all passages sent are listed (they shaped the answer).
- what the tools read: ``read_file`` (``path:start_line``; a notebook as itself),
  ``search_files`` hits in files the answer names, ``inspect_variable`` (``variable:name``).

Web sources are what the web search integration found. The citations integration
(``agent/integrations/citations``) appends the Sources section to the answer text
(``TurnResult.text``, ``TurnEnd``) but not to the history: the model does not need to see
its own source list next turn.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from .results import ToolCallRecord

READ_TOOLS = {"read_file": "path"}  # tool -> its path argument
SEARCH_TOOLS = frozenset({"search_files"})
VARIABLE_TOOLS = {"inspect_variable": "name"}  # tool -> its variable argument
OK_STATUSES = frozenset({"ok", "truncated"})
MAX_SEARCH_HITS = 5  # per search call
MIN_QUOTE_CHARS = 24  # a passage line this long, found in the answer, counts as quoted
_SEARCH_HIT = re.compile(r"^(?P<path>[^\n:]+):(?P<line>\d+): ", re.MULTILINE)
_URL = re.compile(r"^https?://[^\s()<>]+$")


def _mentions(answer: str, name: str) -> bool:
    """``name`` as a whole word of the answer (``a.py`` is not found inside ``data.py``)."""
    return bool(name) and re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", answer) is not None


def pack_citations(pack: dict[str, Any] | None, answer: str) -> list[str]:
    """The anchors of the context pack passages the answer used (see the module's rule)."""
    passages = [p for p in (pack or {}).get("passages", []) if p.get("anchor")]
    named = {p["path"] for p in passages if p["anchor"] in answer}
    used = []
    for p in passages:
        path = p.get("path", "")
        lines = [line.strip() for line in str(p.get("text", "")).splitlines()]
        if (p["anchor"] in answer
                or any(len(line) >= MIN_QUOTE_CHARS and line in answer for line in lines)
                or (path not in named and (_mentions(answer, path) or _mentions(answer, PurePosixPath(path).name)))):
            used.append(p["anchor"])
    return used or [p["anchor"] for p in passages]


def tool_citations(calls: Iterable[ToolCallRecord], answer: str, root: str | Path = ".") -> list[str]:
    """Anchors of what successful tool calls read."""
    anchors: list[str] = []
    for call in calls:
        if call.status not in OK_STATUSES:
            continue
        args = call.arguments if isinstance(call.arguments, dict) else {}
        if call.name in READ_TOOLS:
            rel = workspace_relative(args.get(READ_TOOLS[call.name]), root)
            if rel is not None:
                start = args.get("start_line", 1)
                line = start if isinstance(start, int) and start > 0 else 1
                anchors.append(rel if rel.endswith(".ipynb") else f"{rel}:{line}")
        elif call.name in SEARCH_TOOLS:
            hits = [m for m in _SEARCH_HIT.finditer(call.output)
                    if _mentions(answer, m["path"]) or _mentions(answer, PurePosixPath(m["path"]).name)]
            anchors += [f"{m['path']}:{m['line']}" for m in hits[:MAX_SEARCH_HITS]]
        elif call.name in VARIABLE_TOOLS:
            name = args.get(VARIABLE_TOOLS[call.name])
            if isinstance(name, str) and name.strip():
                anchors.append(f"variable:{name.strip()[:80]}")
    return anchors


def workspace_relative(path: Any, root: str | Path = ".") -> str | None:
    """A tool's path argument as the workspace-relative path it names (None: outside or not a path)."""
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        return None
    pure = PurePosixPath(path.strip())
    if pure.is_absolute():
        try:
            pure = PurePosixPath(Path(pure).relative_to(Path(root).resolve()).as_posix())
        except ValueError:
            return None
    rel = posixpath.normpath(pure.as_posix())
    if rel in (".", "") or rel == ".." or rel.startswith("../"):
        return None
    return rel


def local_citations(pack: dict[str, Any] | None, calls: Iterable[ToolCallRecord], answer: str,
                    root: str | Path = ".", earlier: Sequence[str] = ()) -> list[str]:
    """The turn's workspace anchors, each once: ``earlier`` ones, the context pack's, then the tools'."""
    found = [*earlier, *pack_citations(pack, answer), *tool_citations(calls, answer, root)]
    return list(dict.fromkeys(found))


def _code(text: str) -> str:
    return "`" + text.replace("`", "'").replace("\n", " ") + "`"


def _link(citation: dict[str, str]) -> str | None:
    url = str(citation.get("url", "")).strip()
    if not _URL.match(url):
        return None  # not a plain http(s) address: never a link in the answer
    title = re.sub(r"[\[\]\n\r]", " ", str(citation.get("title", "")).strip()) or url
    return f"- [{title[:200]}]({url})"


def sources_markdown(local: Sequence[str], web: Sequence[dict[str, str]]) -> str:
    """The answer's "Sources" section in Markdown ("" when there is nothing to cite)."""
    items = [f"- {_code(anchor)}" for anchor in local]
    items += [line for line in (_link(c) for c in web) if line]
    return "**Sources**\n\n" + "\n".join(items) if items else ""
