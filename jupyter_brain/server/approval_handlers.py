"""The lab extension's two routes for ``ask``, behind the Jupyter server's own authentication.

``POST {base_url}jupyter-brain/approvals``: a long poll, ``{"browser": id, "notebooks": [paths],
"shown": [request ids]}`` → ``{"requests": [...]}`` (``Approvals.poll``); while one is open the
server counts a browser as attached. ``POST {base_url}jupyter-brain/approvals/<id>``:
``{"approved": bool}`` → 204, or 404 when the request is no longer waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from jupyter_server.base.handlers import APIHandler
from pydantic import BaseModel, ValidationError
from tornado import web

from .approvals import Approvals

APPROVALS_ROUTE = "jupyter-brain/approvals"


class _Poll(BaseModel):
    browser: str
    notebooks: list[str] = []
    shown: list[str] = []


class _Decision(BaseModel):
    approved: bool


def _body(handler: APIHandler, model: type[BaseModel]) -> Any:
    try:
        return model.model_validate(json.loads(handler.request.body or b"{}"))
    except (ValueError, ValidationError) as exc:
        raise web.HTTPError(400, f"bad request body: {exc}".splitlines()[0]) from None


class ApprovalsPollHandler(APIHandler):
    def initialize(self, approvals: Approvals) -> None:
        self.approvals = approvals
        self._task: asyncio.Task[Any] | None = None

    @web.authenticated
    async def post(self) -> None:
        poll = _body(self, _Poll)
        self._task = asyncio.ensure_future(self.approvals.poll(poll.browser, poll.notebooks, poll.shown))
        with contextlib.suppress(asyncio.CancelledError):
            requests = await self._task
            self.finish(json.dumps({"requests": requests}))

    def on_connection_close(self) -> None:  # the page went away or polls again: stop waiting for it
        if self._task is not None:
            self._task.cancel()


class ApprovalDecisionHandler(APIHandler):
    def initialize(self, approvals: Approvals) -> None:
        self.approvals = approvals

    @web.authenticated
    async def post(self, request_id: str) -> None:
        decision = _body(self, _Decision)
        user = self.current_user
        by = getattr(user, "name", None) or getattr(user, "username", None) or str(user or "user")
        if not self.approvals.decide(request_id, decision.approved, by):
            raise web.HTTPError(404, "this request is no longer waiting (answered, timed out or withdrawn)")
        self.set_status(204)
        self.finish()


def approval_handlers(base_url: str, approvals: Approvals) -> list[tuple[str, Any, dict[str, Any]]]:
    from jupyter_server.utils import url_path_join

    route = url_path_join(base_url, APPROVALS_ROUTE)
    return [(route, ApprovalsPollHandler, {"approvals": approvals}),
            (route + "/([A-Za-z0-9-]+)", ApprovalDecisionHandler, {"approvals": approvals})]
