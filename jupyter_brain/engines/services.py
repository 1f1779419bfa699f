"""What the turn answers for the agent, on the cell's thread: its permission requests and
file writes under the permission mode (``read-only`` denies, ``auto`` allows, ``ask``
shows the approval card through the cell's approver), and its calls into the kernel.
Each answer is also a recording item, so a replay shows the same decisions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ..agent.events import ApprovalDecision, ApprovalRequest, EventBase
from ..agent.executor import Approval
from .kernel_mcp import EFFECTS
from .updates import STEP, diff_text

_DECIDED_BY = ("user", "timeout", "no_frontend", "policy", "error")
_EFFECT_OF_KIND = {"read": "read", "search": "read", "fetch": "read", "think": "read",
                   "edit": "write", "delete": "write", "move": "write", "execute": "execute"}

# kernel tool name, arguments → (text, failed)
KernelTool = Callable[[str, dict[str, Any]], tuple[str, bool]]


@dataclass
class Services:
    permission: str  # read-only | ask | auto
    approver: Callable[[Any, Any, Any], Any] | None
    emit: Callable[[EventBase], None]
    kernel_tool: KernelTool | None = None
    approval_timeout_s: float = 0.0
    items: list[dict[str, Any]] = field(default_factory=list)  # the recording's
    approved_paths: set[str] = field(default_factory=set)
    waited_s: float = 0.0  # time spent waiting for the user (not the agent's)

    def decide(self, call_id: str, name: str, effect: str, arguments: Any, preview: dict[str, Any] | None) -> Approval:
        """The permission mode's answer; ``ask`` shows the card and waits for the user."""
        if effect == "read" or self.permission == "auto":
            return Approval(True, by="policy", channel="permission")
        if self.permission == "read-only":
            return Approval(False, by="policy", channel="permission",
                            reason=f"the permission mode is read-only: {effect} is not allowed")
        self.emit(ApprovalRequest(step=STEP, call_id=call_id, name=name, effect=effect, arguments=arguments,
                                  preview=preview, timeout_s=self.approval_timeout_s))
        started = time.monotonic()
        if self.approver is None:
            answer = Approval(False, by="no_frontend", reason="no way to ask the user here")
        else:
            try:
                answer = Approval.of(self.approver(SimpleNamespace(id=call_id, name=name),
                                                   SimpleNamespace(name=name, effect=effect), arguments))
            except Exception as exc:  # noqa: BLE001 - a failing prompt refuses, as for tools
                answer = Approval(False, by="error", reason=f"the approval prompt failed ({type(exc).__name__})")
        waited = time.monotonic() - started
        self.waited_s += waited
        self.emit(ApprovalDecision(step=STEP, call_id=call_id, approved=answer.approved,
                                   by=answer.by if answer.by in _DECIDED_BY else "user",
                                   channel=answer.channel, waited_ms=waited * 1000))
        return answer

    def permission_request(self, data: dict[str, Any]) -> str | None:
        """``session/request_permission``: the option chosen, or None (cancelled)."""
        call = data.get("toolCall") or {}
        options = data.get("options") or []
        call_id = str(call.get("toolCallId") or "permission")
        name = str(call.get("title") or "tool")
        effect = _EFFECT_OF_KIND.get(str(call.get("kind") or ""), "execute")
        diffs = [d for d in map(diff_text, call.get("content") or []) if d]
        paths = _paths_of(call)
        preview = {"path": paths[0] if paths else "", "diff": "\n".join(diffs)} if diffs else None
        answer = self.decide(call_id, name, "write" if effect == "read" else effect, call.get("rawInput"), preview)
        chosen = _option(options, ("allow_once", "allow_always") if answer.approved else ("reject_once", "reject_always"))
        if answer.approved:
            self.approved_paths.update(paths)
        self.items.append({"kind": "permission", "toolCallId": call_id, "title": name, "approved": answer.approved,
                           "by": answer.by, "chosen": chosen})
        return chosen

    def write(self, data: dict[str, Any]) -> str:
        """``fs/write_text_file`` (inside the workspace, checked before): '' when written, else why not."""
        path, content = str(data["path"]), str(data.get("content") or "")
        if path not in self.approved_paths:
            answer = self.decide(f"write:{path}", "write_text_file", "write", {"path": path},
                                 {"path": path, "diff": _file_diff(path, content)})
            if not answer.approved:
                return answer.denial_text()
        try:
            write_file(path, content)
        except OSError as exc:
            return f"could not write {path}: {exc}"
        self.items.append({"kind": "write", "path": path, "content": content})
        return ""

    def kernel(self, data: dict[str, Any]) -> tuple[str, bool]:
        """A call of the kernel's MCP server: the permission mode decides ``execute_code``."""
        tool, arguments = str(data.get("tool")), data.get("arguments") or {}
        if self.kernel_tool is None:
            return "the kernel's tools are not available here", True
        effect = EFFECTS.get(tool, "execute")
        if effect != "read":
            answer = self.decide(f"kernel:{len(self.items)}", f"kernel {tool}", effect, arguments, None)
            if not answer.approved:
                return f"not run: {answer.denial_text()}", True
        text, failed = self.kernel_tool(tool, arguments)
        if effect != "read":
            self.items.append({"kind": "kernel", "tool": tool, "arguments": arguments})
        return text, failed


def write_file(path: str, content: str) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")


def _paths_of(call: dict[str, Any]) -> list[str]:
    given = call.get("rawInput")
    raw: dict[str, Any] = given if isinstance(given, dict) else {}
    paths = [str(raw[k]) for k in ("file_path", "path", "notebook_path") if isinstance(raw.get(k), str)]
    paths += [str(loc["path"]) for loc in call.get("locations") or [] if isinstance(loc, dict) and loc.get("path")]
    paths += [str(c["path"]) for c in call.get("content") or [] if isinstance(c, dict) and c.get("path")]
    return [str(Path(p).resolve()) for p in dict.fromkeys(paths)]


def _option(options: list[dict[str, Any]], kinds: tuple[str, ...]) -> str | None:
    for kind in kinds:
        for option in options:
            if option.get("kind") == kind:
                return str(option.get("optionId"))
    return None


def _file_diff(path: str, new: str) -> str:
    try:
        old: str | None = Path(path).read_text(encoding="utf-8")
    except OSError:
        old = None
    return diff_text({"type": "diff", "path": path, "oldText": old, "newText": new})
