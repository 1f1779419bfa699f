"""What a cell's turn takes from the kernel: its tools, the workspace view, the approver."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from .user_tools import USER_TOOLS

if TYPE_CHECKING:
    from ..agent.tools import ToolSpec


def cell_tools(user_ns: dict[str, Any], checkpoint_store: Any = None, readable: Sequence[Path] = ()) -> list[ToolSpec]:
    """The built-in tools, ``@jupyter_brain.tool`` ones and those of the MCP servers in
    ``<data_dir>/mcp.json`` (started on first use); file writes snapshot into
    ``checkpoint_store`` (a store, or a callable giving one or None for no undo);
    ``readable``: the Agent Skills' folders the read tools may read too."""
    from ..mcp import mcp_tools
    from ..tools import default_tools

    return [*default_tools(user_ns, os.getcwd(), checkpoint_store=checkpoint_store, readable=readable), *USER_TOOLS.values(),
            *mcp_tools(_data_dir())]


def _data_dir() -> str:
    """``AgentMagics.data_dir`` of this kernel (where ``mcp.json`` lives)."""
    from IPython import get_ipython

    shell = get_ipython()
    magics = shell.magics_manager.registry.get("AgentMagics") if shell is not None else None
    return str(getattr(magics, "data_dir", None) or ".jupyter_brain")


def workspace_for(user_ns: dict[str, Any], budget_tokens: int, folder: str = "") -> Callable[[], str] | None:
    """Variables, files and recent cells, rendered fresh for each request (never stored).
    The files are those of ``folder`` (``AgentMagics.workspace_dir``; relative to the working
    directory), or of the working directory when it is empty."""
    if budget_tokens <= 0:
        return None
    from ..tools.workspace_context import notebook_workspace

    root = os.path.join(os.getcwd(), os.path.expanduser(folder)) if folder else os.getcwd()
    return notebook_workspace(user_ns, root, budget_tokens=budget_tokens)


def approver_for(view: Any, timeout_s: float, *, headless: bool = False) -> Any:
    """The AgentView's approval card; stdin where no widget front-end answers; an at-once
    denial in a headless kernel (``notebook/headless.py``: nobody can approve there)."""
    from .approval import NotebookApprover

    if timeout_s <= 0:
        raise UsageError("AgentMagics.approval_timeout must be a positive number of seconds")
    if headless:
        from .headless import HeadlessApprover

        return HeadlessApprover()
    return NotebookApprover(view if hasattr(view, "decision_for") else None, timeout_s=timeout_s)
