"""``web_mode="on"`` for one turn: the search it offers, what it found, what the answer cites.

Which search: the provider's own (``ServerWebSearch``: Anthropic runs it and the answer
carries its citations), else the user's function (``AgentHarness(web_search=fn)``) as a
``web_search(query)`` tool of this turn only, else a notice that none is configured, and
the turn goes on without one.

What it fills in the turn's ``Sources``: ``web`` (``{url, title}``: the server's
citations, or the function's results the answer names by address — all of them when it
names none) and ``rendered_pages`` (pages the function fetched, saved as inert Markdown;
the server's results are encrypted, so they have no page to save).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ....providers.base import ProviderResult
from ....providers.capabilities import server_web_search
from ...events import ErrorEvent
from ...hooks import ToolOffer, TurnContext, TurnHook
from ...tools import ToolError, ToolSpec, tool
from ...web.pages import html_to_text, pages_folder, save_page
from ...web.search import NO_WEB_SEARCH, WEB_TOOL, WebResult, WebSearchError, for_model, read_results

SERVER_MAX_USES = 5  # searches the provider may run per model call
SEARCH_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class WebIntegration:
    """``AgentHarness(web_search=fn)``; active in the turns run with ``web_mode="on"``."""

    name: ClassVar[str] = "web_search"
    turn_options: ClassVar[tuple[str, ...]] = ("web_mode",)  # off: for_turn is not called
    search: Callable[..., Any] | None
    artifacts_root: Path | None  # fetched pages go to <artifacts>/web

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        if ctx.options.web_mode != "on":
            return None
        return WebHook(self.search, self.artifacts_root)


class WebHook(TurnHook):
    """One turn's web search: ``prepare_tools`` decides which, the other points follow it."""

    name = "web_search"

    def __init__(self, search: Callable[..., Any] | None, artifacts_root: Path | None) -> None:
        self.search = search
        self.artifacts_root = artifacts_root
        self.path = "off"  # off | server | function | none
        self.folder: Path | None = None
        self.sources: Any = None  # the turn's Sources (filled from the tool's worker threads too)
        self.found: dict[str, WebResult] = {}  # the function's results, by address, first seen first
        self.texts: list[str] = []  # what the model said in this turn
        self.unsaved: list[str] = []  # pages that could not be saved (told after the model call)
        self._lock = threading.Lock()

    def prepare_tools(self, ctx: TurnContext, offer: ToolOffer) -> ToolOffer:
        self.sources = ctx.sources
        if WEB_TOOL in offer.registry:  # the user's own web_search tool: it is the search
            return offer
        server = server_web_search(ctx.provider, SERVER_MAX_USES)
        if server is not None:
            self.path = "server"
            offer.schemas.append(server)
        elif self.search is not None:
            self.path = "function"
            self.folder = pages_folder(self.artifacts_root)
            offer.tools.append(self._tool())
        else:
            self.path = "none"
        return offer

    def turn_start(self, ctx: TurnContext) -> None:
        if self.path == "none":
            ctx.emit(ErrorEvent(kind="web_search", message=NO_WEB_SEARCH, recoverable=True))

    def after_model_call(self, ctx: TurnContext, step: int, result: ProviderResult) -> ProviderResult:
        """The server's searches as tool rows, and the citations so far."""
        if self.path not in ("server", "function"):
            return result
        self.texts.append(result.text)
        if self.path == "server":  # its searches are rows of the server_tools integration
            self._cite([{"url": c.url, "title": c.title} for c in result.citations])
        else:
            self._cite_found()
        with self._lock:
            unsaved, self.unsaved = self.unsaved, []
        for message in unsaved:
            ctx.emit(ErrorEvent(step=step, kind="web_search", message=message, recoverable=True))
        return result

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
            if path not in self.sources.rendered_pages:
                self.sources.rendered_pages.append(path)

    def _cite_found(self) -> None:
        with self._lock:
            found = list(self.found.values())
        said = "\n".join(self.texts)
        named = [r for r in found if r.url.rstrip("/") in said]
        self.sources.web.clear()
        self._cite([{"url": r.url, "title": " ".join(html_to_text(r.title).split())} for r in named or found])

    def _cite(self, citations: list[dict[str, Any]]) -> None:
        web = self.sources.web
        have = {c["url"] for c in web}
        for c in citations:
            if c["url"] not in have:
                have.add(c["url"])
                web.append({"url": str(c["url"]), "title": str(c.get("title") or "")})
