"""The gate an outside agent's call passes: the permission mode, the limits, provenance.

``read-only`` refuses edits and executions; ``ask`` would show an approval card in the open
notebook, and with no card to show (none is drawn yet for outside agents: see
ARCHITECTURE.md) refuses at once, saying how to allow; ``auto`` allows. Each MCP session
may run ``max_executions_per_session`` executions. Every cell an agent writes carries
``metadata.jupyter_brain.provenance``: who (the client's name from its ``initialize``), which
session, when.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Literal

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
    allowed: bool
    how: str  # auto, read, refused: read-only, refused: ask, refused: limit

    def as_dict(self) -> dict[str, Any]:
        return {"allowed": self.allowed, "how": self.how}


class Gate:
    def __init__(self, permission: str, max_executions: int, closed: str | None = None) -> None:
        self.permission = permission
        self.max_executions = max_executions
        self.closed = closed  # the admin's policy refuses every call (``policy.py``): why

    def check(self, session: OutsideSession, tool: str, effect: Effect) -> Decision:
        """Allowed, or a ``ToolProblem`` that says why not and how to allow."""
        if self.closed is not None:
            raise Refused(Decision(False, "refused: policy"), f"{tool} refused: {self.closed}.")
        if effect == "read":
            return Decision(True, "read")
        if self.permission == "read-only":
            raise Refused(Decision(False, "refused: read-only"),
                          f"{tool} refused: jupyter-brain's permission for outside agents is 'read-only' on this "
                          f"server, so nothing is edited or run. To allow it, {ALLOW_HINT}.")
        if self.permission == "ask":
            raise Refused(Decision(False, "refused: ask"),
                          f"{tool} needs the user's approval (permission 'ask'), and no approval card can be shown "
                          f"in a browser for it, so it is refused. To allow outside agents without asking, {ALLOW_HINT}.")
        if effect == "execute" and self.max_executions and session.executions >= self.max_executions:
            raise Refused(Decision(False, "refused: limit"),
                          f"{tool} refused: this session has used its {self.max_executions} executions "
                          "(JupyterBrainMCP.max_executions_per_session). Start a new MCP session or raise the limit.")
        if effect == "execute":
            session.executions += 1
        return Decision(True, "auto")


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
