"""Built-in notebook tools: the user's variables, Python execution and workspace files.

``default_tools(namespace, root)`` is what a session offers by default. None of these
modules imports IPython or widgets at import time: they work on a plain dict namespace,
so they run the same in a kernel, a script or a test.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jupyter_brain.agent.tools import ToolSpec
from jupyter_brain.tools.files import file_tools
from jupyter_brain.tools.paths import WorkspaceRoot
from jupyter_brain.tools.python_exec import python_tools
from jupyter_brain.tools.variables import variable_tools
from jupyter_brain.tools.write import write_tools

__all__ = ["WorkspaceRoot", "default_tools", "file_tools", "python_tools", "variable_tools", "write_tools"]


def default_tools(
    namespace: dict[str, Any],
    root: str | Path | WorkspaceRoot,
    *,
    python_timeout_s: float = 60,
    checkpoint_store: Any = None,
    readable: Sequence[str | Path] = (),
) -> list[ToolSpec]:
    """Every built-in tool: variables and files (read), write_file / edit_file (write), then
    run_python (execute). ``checkpoint_store`` is where writes are snapshotted (None: the
    store whose turn began last, see ``jupyter_brain.agent.checkpoints.active_store``).
    ``readable``: folders outside the root the read tools may read too (Agent Skills')."""
    workspace = root if isinstance(root, WorkspaceRoot) else WorkspaceRoot(root, readable)
    return [
        *variable_tools(namespace),
        *file_tools(workspace),
        *write_tools(workspace, checkpoint_store),
        *python_tools(namespace, timeout_s=python_timeout_s),
    ]
