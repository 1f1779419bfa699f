"""Tools from MCP servers (Model Context Protocol), through the official ``mcp`` SDK.

``config`` reads and writes ``<data_dir>/mcp.json``; ``manager`` keeps the kernel's
servers running on a background loop (``loop``), one ``connection`` each; ``adapter``
and ``schema`` turn their tools into ``ToolSpec``s; ``results`` turns their results into
text. Importing this package loads no SDK: that happens when a server is configured.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .config import CONFIG_NAME, ConfigError, ServerConfig, config_path, load_servers

if TYPE_CHECKING:
    from ..agent.tools import ToolSpec

__all__ = ["CONFIG_NAME", "ConfigError", "ServerConfig", "config_path", "load_servers", "mcp_tools"]


def mcp_tools(data_dir: str | Path = ".jupyter_brain", report: Callable[[str], None] | None = print) -> list[ToolSpec]:
    """The tools of the MCP servers in ``<data_dir>/mcp.json``, started if need be.

    Without the file (or with no server in it) this returns at once and starts nothing;
    servers that are no longer listed are stopped.
    """
    path = config_path(data_dir)
    if not path.exists():
        manager = sys.modules.get(f"{__name__}.manager")  # loaded only once a server was configured
        kernel = getattr(manager, "_KERNEL", None)
        if kernel is not None and kernel.connections:
            return kernel.tools(path, report)  # the file is gone: stop its servers
        return []
    from .manager import kernel_manager

    try:
        return kernel_manager().tools(path, report)
    except Exception as exc:  # noqa: BLE001 - MCP trouble never stops a turn: it runs without those tools
        if report is not None:
            report(f"MCP servers left out of this turn: {type(exc).__name__}: {exc}")
        return []
