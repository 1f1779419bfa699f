"""A cell's conventions: the AGENTS.md and Agent Skills of the notebook's folder chain
(``jupyter_brain/conventions``), read afresh for each turn so an edited file counts at once.

The notebook's folder is the kernel's working directory (jupyter-server, VS Code, nbconvert
and papermill start the kernel there). Reading them never stops a cell: a failure is one
printed line and the turn runs without them.
"""

from __future__ import annotations

import os
from typing import Any

from ..conventions import ConventionsHook, ProjectConventions, find_conventions

__all__ = ["ConventionsHook", "cell_conventions"]


def cell_conventions(magics: Any) -> ProjectConventions:
    """The conventions in force for the next turn (``AgentMagics.agents_md`` off: no AGENTS.md)."""
    enabled = bool(getattr(magics, "agents_md", True))
    try:
        return find_conventions(os.getcwd(), agents_md=enabled)
    except Exception as exc:  # noqa: BLE001 - the conventions are optional; the turn goes on
        print(f"note: AGENTS.md and Agent Skills not read ({type(exc).__name__}: {exc})")
        return ProjectConventions(chain=[], agents_md_enabled=enabled)
