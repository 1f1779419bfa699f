"""What the ``ask`` card shows for a call: the cell's diff for an edit, the code for an
execution, read from the notebook as it is now (masked, as everything the agent sends is)."""

from __future__ import annotations

import difflib
from typing import Any

from jupyter_brain.agent.redact import Redactor

from .approvals import ApprovalRequest
from .errors import ToolProblem
from .gate import OutsideSession
from .live_document import NotebookDocument
from .notebooks import cell_position

MAX_PREVIEW_CHARS = 20_000


async def approval_request(store: NotebookDocument, session: OutsideSession, tool: str, effect: str, args: Any,
                           api_path: str, redact: Redactor) -> ApprovalRequest:
    """The card's content; a bad index or a missing notebook is the agent's problem, said at once."""
    title, diff, code = "", "", ""
    if tool == "create_notebook":
        title = f"create the notebook {api_path}" + (f" (kernel {args.kernel})" if args.kernel else "")
    elif tool == "execute_code":
        title, code = "run code in the notebook's kernel (no cell added)", args.code
    else:
        nb = await store.read(api_path)
        if tool == "insert_cell":
            position = cell_position(nb, args.index, None, inserting=True)
            title = f"insert a {args.cell_type} cell at index {position}"
            diff = _diff("", args.source, f"new cell {position}")
        else:
            position = cell_position(nb, args.index, args.cell_id)
            cell = nb.cells[position]
            source = _text(cell.get("source", ""))
            where = f"cell {position} (id {cell.get('id')})"
            if tool == "edit_cell":
                title, diff = f"edit {where}", _diff(source, args.source, where)
            elif tool == "delete_cell":
                title, diff = f"delete {where}", _diff(source, "", where)
            elif tool == "execute_cell":
                if cell.get("cell_type") != "code":
                    raise ToolProblem(f"Cell {position} is a {cell.get('cell_type')} cell: only code cells run")
                title, code = f"run {where}", source
            else:
                title = tool
    return ApprovalRequest(session.client, session.session_id, tool, effect, api_path, title,
                           _cap(redact(diff)), _cap(redact(code)))


def _diff(before: str, after: str, name: str) -> str:
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                 f"{name} (before)", f"{name} (after)", n=3)
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _cap(text: str) -> str:
    if len(text) <= MAX_PREVIEW_CHARS:
        return text
    return text[:MAX_PREVIEW_CHARS] + f"\n… ({len(text) - MAX_PREVIEW_CHARS} more characters not shown)\n"


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)
