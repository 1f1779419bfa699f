"""The id of the cell being executed, where the frontend sends one.

JupyterLab and Notebook 7 put ``cellId`` in the execute request's metadata; nbclient,
papermill, VS Code and terminal IPython send none (``None``). Its own module, because the
lab channel (``--cells``) and the replay of recordings (``replay.py``) both read it.
"""

from __future__ import annotations

from typing import Any


def current_cell_id(shell: Any) -> str | None:
    """JupyterLab's id of the cell being executed (``cellId`` in the request's metadata)."""
    kernel = getattr(shell, "kernel", None)
    parent: Any = None
    if kernel is not None and hasattr(kernel, "get_parent"):
        try:
            parent = kernel.get_parent()
        except Exception:  # noqa: BLE001 - older ipykernels take a channel argument; fall back below
            parent = None
    if not parent:
        parent = getattr(shell, "parent_header", None)
    metadata = parent.get("metadata") if isinstance(parent, dict) else None
    cell_id = metadata.get("cellId") if isinstance(metadata, dict) else None
    return str(cell_id) if cell_id else None
