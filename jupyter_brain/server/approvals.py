"""``ask``: an outside agent's edit or execution waits for the user's decision in JupyterLab.

The lab extension keeps a long poll open (``approval_handlers.py``) that names the notebooks
its tabs show; that is how the server knows a browser is attached. A request for a notebook
open in some tab is shown there as a card above the notebook; one for a notebook no tab shows
(``create_notebook``, or a notebook the user has closed) as a dialog in every attached
JupyterLab. With no browser attached ``ask`` is refused at once (``gate.py``). The first
decision wins; an unanswered request is refused after ``JupyterBrainMCP.approval_timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

POLL_S = 25.0  # a poll with nothing new is answered after this long (the browser polls again at once)
ATTACHED_GRACE_S = 15.0  # a browser between two polls (or reloading) still counts as attached this long


@dataclass(frozen=True)
class ApprovalRequest:
    """What the card shows: who asks, for which tool, on which notebook, and the diff or the code."""

    client: str
    session: str
    tool: str
    effect: str
    path: str
    title: str  # one line: "insert a code cell at index 3", "run cell 2 (id abc)"
    diff: str = ""  # an edit: the cell before and after, as a unified diff
    code: str = ""  # an execution: the code that runs


@dataclass(frozen=True)
class ApprovalAnswer:
    approved: bool
    by: str  # the Jupyter user who clicked, or "timeout" / "server stopping"


@dataclass
class _Pending:
    id: str
    request: ApprovalRequest
    deadline: float
    future: asyncio.Future[ApprovalAnswer]

    def as_json(self, now: float) -> dict[str, Any]:
        return {"id": self.id, "timeout_s": max(0, round(self.deadline - now)),
                **self.request.__dict__}


@dataclass
class _Browser:
    notebooks: frozenset[str] = frozenset()
    polls: int = 0
    last_seen: float = field(default_factory=time.monotonic)


class Approvals:
    """Pending approvals, and the JupyterLab pages that can answer them."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.poll_s = POLL_S
        self._pending: dict[str, _Pending] = {}
        self._browsers: dict[str, _Browser] = {}
        self._changed = asyncio.Event()
        self._ids = itertools.count(1)

    # the gate's side ----------------------------------------------------------------
    def attached(self) -> bool:
        """A JupyterLab page with the extension polls (or did a moment ago): a card can be shown."""
        return bool(self._attached())

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """The user's answer, or a refusal by ``timeout`` once ``timeout_s`` has passed."""
        loop = asyncio.get_running_loop()
        pending = _Pending(f"{next(self._ids)}-{secrets.token_hex(6)}", request,
                           time.monotonic() + self.timeout_s, loop.create_future())
        self._pending[pending.id] = pending
        self._notify()
        try:
            return await asyncio.wait_for(asyncio.shield(pending.future), self.timeout_s)
        except TimeoutError:
            return ApprovalAnswer(False, "timeout")
        finally:  # answered, timed out, or the agent went away: the card goes
            self._pending.pop(pending.id, None)
            self._notify()

    # the browser's side -------------------------------------------------------------
    def decide(self, request_id: str, approved: bool, by: str) -> bool:
        """The user's click; False when the request is no longer waiting."""
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            return False
        pending.future.set_result(ApprovalAnswer(approved, by))
        return True

    async def poll(self, browser_id: str, notebooks: list[str], shown: list[str]) -> list[dict[str, Any]]:
        """The requests this browser should show, once they differ from ``shown`` (its cards
        now), the browser's notebooks changed, or ``poll_s`` passed."""
        browser = self._browsers.get(browser_id)
        changed = browser is None or frozenset(notebooks) != browser.notebooks
        if browser is None:
            browser = self._browsers[browser_id] = _Browser()
        if changed:  # a request for a notebook just opened (or closed) moves between tab and dialog
            browser.notebooks = frozenset(notebooks)
            self._notify()
        browser.polls += 1
        browser.last_seen = time.monotonic()
        try:
            deadline = time.monotonic() + self.poll_s
            while True:
                mine = self._for(browser)
                if changed or sorted(p["id"] for p in mine) != sorted(shown):
                    return mine
                left = deadline - time.monotonic()
                if left <= 0:
                    return mine
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), left)
        finally:
            browser.polls -= 1
            browser.last_seen = time.monotonic()

    def close(self) -> None:
        """The server stops: every waiting call is refused."""
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_result(ApprovalAnswer(False, "server stopping"))

    # inside -------------------------------------------------------------------------------
    def _for(self, browser: _Browser) -> list[dict[str, Any]]:
        """Requests on this browser's notebooks (in their tabs), and those on notebooks no
        attached browser shows (in a dialog)."""
        now = time.monotonic()
        shown_anywhere = set().union(*(b.notebooks for b in self._attached()))
        mine = []
        for p in self._pending.values():
            if p.request.path in browser.notebooks:
                mine.append({**p.as_json(now), "where": "notebook"})
            elif p.request.path not in shown_anywhere:
                mine.append({**p.as_json(now), "where": "dialog"})
        return mine

    def _attached(self) -> list[_Browser]:
        now = time.monotonic()
        for key in [k for k, b in self._browsers.items() if not b.polls and now - b.last_seen > ATTACHED_GRACE_S]:
            del self._browsers[key]
        return list(self._browsers.values())

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
