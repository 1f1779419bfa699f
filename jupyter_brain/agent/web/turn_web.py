"""``web_mode="on"`` for one turn: the search it offers, what it found, what the answer cites.

Which search: the provider's own (``ServerWebSearch``: Anthropic runs it and the answer
carries its citations), else the user's function (``AgentHarness(web_search=fn)``) as a
``web_search(query)`` tool, else a notice that none is configured, and the turn goes on
without one. The tool belongs to this turn only: it joins the turn's tool schemas and a
copy of the harness's registry, never the harness itself.

What it fills on the turn: ``web_citations`` (``{url, title}``: the server's citations, or
the function's results the answer names by address — all of them when it names none) and
``rendered_content_paths`` (pages the function fetched, saved as inert Markdown; the
server's results are encrypted, so they have no page to save).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ...providers.base import ProviderResult, ServerToolUse
from ...providers.capabilities import server_web_search
from ..events import ErrorEvent, ToolCallArgs, ToolCallEnd, ToolCallStart
from ..executor import BoundedToolExecutor
from ..results import ToolCallRecord
from ..tools import ToolError, ToolSpec, tool
from .pages import html_to_text, pages_folder, save_page
from .search import WebResult, WebSearchError, WebSearchFunction, for_model, read_results

if TYPE_CHECKING:
    from ..harness import AgentHarness
    from ..turn import Turn

WEB_TOOL = "web_search"
SERVER_MAX_USES = 5  # searches the provider may run per model call
SEARCH_TIMEOUT_S = 60.0
NO_WEB_SEARCH = (
    "web search is on, but no web search is configured: this provider has no server-side web search "
    "and no search function was given (AgentHarness(web_search=fn), or @jupyter_brain.web_search in a "
    "notebook). The turn goes on without it."
)
WebPath = Literal["off", "server", "function", "none"]


class TurnWeb:
    """The turn's web search. ``start`` decides; the turn calls ``announce`` after its
    TurnStart, ``executor`` for its tool step and ``on_result`` after each model call."""

    def __init__(self, turn: Turn, path: WebPath, search: WebSearchFunction | None = None,
                 folder: Path | None = None) -> None:
        self.turn = turn
        self.path = path
        self.search = search
        self.folder = folder
        self.found: dict[str, WebResult] = {}  # the function's results, by address, first seen first
        self.texts: list[str] = []  # what the model said in this turn
        self.unsaved: list[str] = []  # pages that could not be saved (told once the step ends)
        self._lock = threading.Lock()
        self.spec: ToolSpec | None = self._tool() if path == "function" else None

    @classmethod
    def start(cls, harness: AgentHarness, turn: Turn) -> TurnWeb:
        """Pick the turn's search and add its tool to ``turn.tool_schemas``."""
        if turn.options.web_mode != "on":
            return cls(turn, "off")
        if WEB_TOOL in harness.tools:  # the user's own web_search tool: it is the search
            return cls(turn, "off")
        server = server_web_search(harness.provider, SERVER_MAX_USES)
        if server is not None:
            turn.tool_schemas = [*turn.tool_schemas, server]
            return cls(turn, "server")
        if harness.web_search is not None:
            web = cls(turn, "function", harness.web_search, pages_folder(harness.artifacts.root))
            assert web.spec is not None
            turn.tool_schemas = [*turn.tool_schemas, web.spec.schema()]
            return web
        return cls(turn, "none")

    # the turn's hooks ---------------------------------------------------------------
    def announce(self) -> None:
        if self.path == "none":
            self.turn.emit(ErrorEvent(kind="web_search", message=NO_WEB_SEARCH, recoverable=True))

    def executor(self, base: BoundedToolExecutor) -> BoundedToolExecutor:
        """``base``, or for the function search a copy whose registry also has the tool."""
        if self.spec is None:
            return base
        registry = base.registry.copy()
        registry.register(self.spec)
        return BoundedToolExecutor(
            registry, artifacts=base.artifacts, parallel_enabled=base.parallel_enabled,
            enable_validation=base.enable_validation, approver=base.approver, output_limit=base.output_limit,
        )

    def on_result(self, result: ProviderResult, step: int) -> None:
        """After a model call: the server's searches as tool rows, and the citations so far."""
        if self.path in ("off", "none"):
            return
        self.texts.append(result.text)
        if self.path == "server":
            for use in result.server_tools:
                self._show_server_search(use, step)
            self._cite([{"url": c.url, "title": c.title} for c in result.citations])
        else:
            self._cite_found()
        with self._lock:
            unsaved, self.unsaved = self.unsaved, []
        for message in unsaved:
            self.turn.emit(ErrorEvent(step=step, kind="web_search", message=message, recoverable=True))

    # the server's search --------------------------------------------------------------
    def _show_server_search(self, use: ServerToolUse, step: int) -> None:
        turn, status = self.turn, "error" if use.error else "ok"
        found = [f"[{i}] {' '.join(r['title'].split()) or r['url']} — {r['url']}" for i, r in enumerate(use.results, 1)]
        count = f"{len(found)} result{'s' * (len(found) != 1)}" if found else "no results"
        preview = "\n".join([f"searched by the provider ({getattr(turn.harness.provider, 'name', '')}): {count}", *found])
        turn.emit(ToolCallStart(step=step, call_id=use.id, name=use.name))
        turn.emit(ToolCallArgs(step=step, call_id=use.id, name=use.name, arguments=use.input))
        turn.emit(ToolCallEnd(step=step, call_id=use.id, name=use.name, status=status,
                              result_preview="" if use.error else preview,
                              error=f"the provider's web search failed: {use.error}" if use.error else None))
        turn.tool_calls.append(ToolCallRecord(call_id=use.id, name=use.name, arguments=use.input, status=status,
                                              output=preview, step=step, error=use.error))

    # the user's function --------------------------------------------------------------
    def _tool(self) -> ToolSpec:
        def web_search(query: str) -> str:
            """Search the web for current or outside information; returns numbered results with
            their URLs (and page excerpts when available). Cite the pages you use by URL.

            Args:
                query: what to search for, a few keywords
            """
            return self._run_search(query)

        return tool(web_search, name=WEB_TOOL, effect="read", tool_timeout_s=SEARCH_TIMEOUT_S, retry_on_timeout=False)

    def _run_search(self, query: str) -> str:
        """Runs on a tool worker thread: the user's function, its pages saved."""
        query = " ".join(str(query).split())
        if not query:
            raise ToolError("web_search needs a query: a few keywords")
        assert self.search is not None
        try:
            results, skipped = read_results(self.search(query))
        except WebSearchError as exc:
            raise ToolError(str(exc)) from None
        with self._lock:
            for r in results:
                self.found.setdefault(r.url, r)
        for r in results:
            if r.content and self.folder is not None:
                self._save(r, query)
        return for_model(query, results, skipped)

    def _save(self, result: WebResult, query: str) -> None:
        assert self.folder is not None
        try:
            path = str(save_page(result, self.folder, query).resolve())
        except OSError as exc:
            with self._lock:
                self.unsaved.append(f"could not save the page {result.url} as Markdown: {exc}")
            return
        with self._lock:
            if path not in self.turn.rendered_content_paths:
                self.turn.rendered_content_paths.append(path)

    def _cite_found(self) -> None:
        with self._lock:
            found = list(self.found.values())
        said = "\n".join(self.texts)
        named = [r for r in found if r.url.rstrip("/") in said]
        self.turn.web_citations.clear()
        self._cite([{"url": r.url, "title": " ".join(html_to_text(r.title).split())} for r in named or found])

    def _cite(self, citations: list[dict[str, Any]]) -> None:
        have = {c["url"] for c in self.turn.web_citations}
        for c in citations:
            if c["url"] not in have:
                have.add(c["url"])
                self.turn.web_citations.append({"url": str(c["url"]), "title": str(c.get("title") or "")})
