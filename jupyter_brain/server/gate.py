"""The gate an outside agent's call passes: the permission mode, the limits, provenance.

``read-only`` refuses edits and executions; ``ask`` shows an approval card in JupyterLab
(``approvals.py``) and runs the call only when the user approves; with no JupyterLab attached
it refuses at once, saying how to allow; ``auto`` allows. Each MCP session
may run ``max_executions_per_session`` executions. Every cell an agent writes carries
``metadata.jupyter_brain.provenance``: who (the client's name from its ``initialize``), which
session, when.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Literal

from .approvals import ApprovalRequest, Approvals
from .errors import ToolProblem

Effect = Literal["read", "write", "execute"]
ALLOW_HINT = ("start the server with --JupyterBrainMCP.permission=auto, or set "
              "c.JupyterBrainMCP.permission = 'auto' in jupyter_server_config.py")


@dataclass
class OutsideSession:
    """One MCP session: the client it says it is, and what it has used."""

    session_id: str
    client: str = "unknown client"
    client_version: str = ""
    executions: int = 0
    calls: int = 0
    started: float = field(default_factory=lambda: datetime.datetime.now(datetime.UTC).timestamp())


@dataclass(frozen=True)
class Decision:
    # auto, read, ask (to be asked), approved, denied, refused: read-only / ask / limit / timeout / policy
    allowed: bool
    how: str
    by: str = ""  # who approved or denied (the Jupyter user who clicked)

    def as_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {"allowed": self.allowed, "how": self.how}
        if self.how == "approved":
            found["approved_by"] = self.by
        elif self.how == "denied":
            found.update(denied=True, denied_by=self.by)
        return found


class Gate:
    def __init__(self, permission: str, max_executions: int, closed: str | None = None,
                 approvals: Approvals | None = None) -> None:
        self.permission = permission
        self.max_executions = max_executions
        self.closed = closed  # the admin's policy refuses every call (``policy.py``): why
        self.approvals = approvals  # the cards of ``ask``; None: no browser can ever answer

    def check(self, session: OutsideSession, tool: str, effect: Effect) -> Decision:
        """Allowed, ``Decision(False, "ask")`` (then ``ask`` the user), or a ``ToolProblem``
        that says why not and how to allow."""
        if self.closed is not None:
            raise Refused(Decision(False, "refused: policy"), f"{tool} refused: {self.closed}.")
        if effect == "read":
            return Decision(True, "read")
        if self.permission == "read-only":
            raise Refused(Decision(False, "refused: read-only"),
                          f"{tool} refused: jupyter-brain's permission for outside agents is 'read-only' on this "
                          f"server, so nothing is edited or run. To allow it, {ALLOW_HINT}.")
        if self.permission == "ask" and (self.approvals is None or not self.approvals.attached()):
            raise Refused(Decision(False, "refused: ask"),
                          f"{tool} needs the user's approval (permission 'ask'), and no JupyterLab with jupyter-brain's "
                          "extension is open on this server to show the approval card, so it is refused. To allow "
                          f"outside agents without asking, {ALLOW_HINT}.")
        if effect == "execute" and self.max_executions and session.executions >= self.max_executions:
            raise Refused(Decision(False, "refused: limit"),
                          f"{tool} refused: this session has used its {self.max_executions} executions "
                          "(JupyterBrainMCP.max_executions_per_session). Start a new MCP session or raise the limit.")
        if self.permission == "ask":
            return Decision(False, "ask")
        if effect == "execute":
            session.executions += 1
        return Decision(True, "auto")

    async def ask(self, session: OutsideSession, request: ApprovalRequest) -> Decision:
        """The user's decision on the card, or a ``Refused`` saying it was denied or not answered."""
        assert self.approvals is not None  # check() returned "ask"
        answer = await self.approvals.ask(request)
        tool = request.tool
        if answer.approved:
            if request.effect == "execute":
                session.executions += 1
            return Decision(True, "approved", answer.by)
        if answer.by == "timeout":
            raise Refused(Decision(False, "refused: timeout"),
                          f"{tool} refused: nobody answered its approval card in JupyterLab within "
                          f"{self.approvals.timeout_s:g} s (JupyterBrainMCP.approval_timeout), so nothing was changed "
                          f"or run. Ask the user, then try again; to allow without asking, {ALLOW_HINT}.")
        if answer.by == "server stopping":
            raise Refused(Decision(False, "refused: server stopping"),
                          f"{tool} refused: the Jupyter server is stopping, so its approval card was withdrawn.")
        raise Refused(Decision(False, "denied", answer.by),
                      f"{tool} denied: the user ({answer.by}) denied this call in JupyterLab's approval card, so "
                      "nothing was changed or run. Do not retry it unchanged; ask the user what they want instead.")


class Refused(ToolProblem):
    def __init__(self, decision: Decision, message: str) -> None:
        super().__init__(message)
        self.decision = decision


def stamp(cell: Any, session: OutsideSession, tool: str) -> None:
    """Mark ``cell`` as written by the outside agent of ``session`` (kept on later edits by others)."""
    meta = cell.setdefault("metadata", {}).setdefault("jupyter_brain", {})
    meta["provenance"] = {
        "client": session.client,
        **({"client_version": session.client_version} if session.client_version else {}),
        "session": session.session_id,
        "tool": tool,
        "time": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
