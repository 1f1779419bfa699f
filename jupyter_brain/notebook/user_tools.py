"""Tools registered with ``@jupyter_brain.tool``: offered in every session of the kernel.

A plain dict at module level, so the decorator (run at import of a user's module or in
a cell) needs neither the magics nor the agent core loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..agent.tools import ToolSpec

USER_TOOLS: dict[str, ToolSpec] = {}
