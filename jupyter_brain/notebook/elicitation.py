"""The notebook's answer to an MCP server's elicitation (``elicitation/create``): a form or a
link the server asks the user for, during a tool call.

* In a turn with the widget view, a card under the waiting tool's row: the form's fields
  (text, numbers, a checkbox, choices) with Accept, Decline and Cancel; a URL request is a
  link card naming the server (the user opens it; Accept says it is done). The time spent
  there is not the tool's (``ToolContext.waiting_for_user``).
* Headless (nbconvert, papermill), outside a turn, or in a view that cannot show a form:
  declined at once, with a line in the tool's row saying why.
* The answer is kept in the turn's recording (by question), so a replay (Run All, another
  machine) answers the same question the same way without asking.
"""

from __future__ import annotations

import itertools
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..mcp.elicitation import ElicitationAnswer, ElicitationRequest

POLL_S = 0.05  # how often the card's answer is looked for (a worker thread; the kernel's subshell delivers it)
_ids = itertools.count(1)


@dataclass
class ElicitationTurn:
    """The running cell's turn, as the elicitor needs it (set by ``agent_cell``)."""

    view: Any
    headless: bool
    provider: Any  # the turn's provider: a ReplayingProvider keeps and replays the answers
    sampling: Any  # the SamplingTurn, whose ``ctx`` (the TurnContext: its emit) MCPCellHook sets
    timeout_s: float = 300.0


class NotebookElicitor:
    """``MCPManager.set_elicitor(elicitor)``: one per kernel, told of each turn."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turn: ElicitationTurn | None = None

    def begin(self, turn: ElicitationTurn) -> None:
        with self._lock:
            self._turn = turn

    def end(self, turn: ElicitationTurn) -> None:
        with self._lock:
            if self._turn is turn:
                self._turn = None

    def __call__(self, request: ElicitationRequest) -> ElicitationAnswer:
        from ..mcp.elicitation import ElicitationAnswer

        with self._lock:
            turn = self._turn
        if turn is None:
            return _declined(request, "no %%agent turn is running to ask in")
        key = request.key()
        recorded = getattr(turn.provider, "recorded_answer", None)
        answer = ElicitationAnswer.of(recorded(key)) if callable(recorded) else None
        if answer is not None:
            _note(request, "info", f"answered from the turn's recording ({answer.action})")
            return answer
        if turn.headless:
            answer = _declined(request, "nobody can answer in a headless run (nbconvert, papermill)")
        elif not hasattr(turn.view, "elicitation_for"):
            answer = _declined(request, "this view cannot show a form (no widget front-end)")
        else:
            answer = _ask(turn, request)
        keep = getattr(turn.provider, "record_answer", None)
        if callable(keep):
            keep(key, answer.as_dict())
        return answer


def _declined(request: ElicitationRequest, why: str) -> ElicitationAnswer:
    from ..mcp.elicitation import ElicitationAnswer

    _note(request, "warning", f"declined: {why}")
    return ElicitationAnswer("decline")


def _note(request: ElicitationRequest, level: str, text: str) -> None:
    """A line in the waiting tool's row (or the turn's log)."""
    from ..agent.tool_context import current_tool_context
    from ..mcp.client_hooks import server_log

    what = "link" if request.mode == "url" else "form"
    server_log(request.server, level, f"{what} request ({_short(request.message)}) {text}", "jupyter-brain",
               current_tool_context())


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ask(turn: ElicitationTurn, request: ElicitationRequest) -> ElicitationAnswer:
    """The card (an ``approval_request`` of effect ``elicitation``), the user's answer, the
    decision event; no answer before the timeout is a cancel."""
    from ..agent.events import ApprovalDecision, ApprovalRequest
    from ..agent.tool_context import current_tool_context
    from ..mcp.elicitation import ElicitationAnswer, checked_content

    tool = current_tool_context()
    parent = request.call_id or (tool.call_id if tool is not None else None)
    step = tool.step if tool is not None else 0
    call_id = f"{parent or 'mcp'}~elicitation{next(_ids)}"
    form: dict[str, Any] = {"mode": request.mode, "server": request.server, "message": request.message}
    if request.mode == "url":
        form["url"] = request.url
    else:
        form["fields"] = request.fields
        form["required"] = list(request.required)
    emit = getattr(getattr(turn.sampling, "ctx", None), "emit", None)
    if emit is None:
        return _declined(request, "the turn has no view to ask in yet")
    emit(ApprovalRequest(step=step, call_id=call_id, name=f"{request.server} asks", effect="elicitation",
                         arguments={"message": request.message, **({"url": request.url} if request.url else {})},
                         preview={"parent_call_id": parent, "elicitation": form}, timeout_s=turn.timeout_s))
    started = time.monotonic()
    reply: dict[str, Any] | None = None
    with tool.waiting_for_user() if tool is not None else nullcontext():  # not the tool's time
        while time.monotonic() - started < turn.timeout_s:
            reply = turn.view.elicitation_for(call_id)
            if reply is not None:
                break
            time.sleep(POLL_S)
    action = str((reply or {}).get("action") or "cancel")
    answer = ElicitationAnswer("cancel")
    if action in ("decline", "cancel"):
        answer = ElicitationAnswer(action)  # type: ignore[arg-type]
    elif action == "accept" and request.mode == "url":
        answer = ElicitationAnswer("accept")
    elif action == "accept":
        content, error = checked_content(request, (reply or {}).get("content"))
        answer = ElicitationAnswer("accept", content) if content is not None else ElicitationAnswer("cancel")
        if error:
            _note(request, "warning", f"cancelled: {error}")
    emit(ApprovalDecision(step=step, call_id=call_id, approved=answer.action == "accept",
                          by="user" if reply is not None else "timeout", channel="widget" if reply else "",
                          waited_ms=(time.monotonic() - started) * 1000, action=answer.action))
    return answer


_KERNEL_ELICITOR = NotebookElicitor()


def kernel_elicitor(magics: Any) -> NotebookElicitor:
    """The kernel's elicitor, installed on the kernel's MCP manager where MCP servers are
    configured (``mcp.json``); elsewhere nothing of MCP loads."""
    from ..mcp.config import config_path

    if config_path(str(getattr(magics, "data_dir", "") or ".jupyter_brain")).exists():
        from ..mcp.manager import kernel_manager

        kernel_manager().set_elicitor(_KERNEL_ELICITOR)
    return _KERNEL_ELICITOR
