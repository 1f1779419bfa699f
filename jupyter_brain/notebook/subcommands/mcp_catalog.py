"""``%agent mcp resources / read / prompts``: what the MCP servers offer besides tools.

Listing starts the servers that are not running yet (as a turn would) and prints one row
per resource or prompt; a server that fails says so in one line, the others still list.
``read`` prints one resource, so the user sees what ``%%agent --resource`` would attach.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

MIME_WIDTH = 24


def config_file(magics: Any) -> Path:
    """``<data_dir>/mcp.json`` of this kernel."""
    from ...mcp.config import config_path

    return config_path(magics.data_dir)


def shown(path: Path) -> str:
    """The config file's path when it is under the working directory; its role otherwise
    (a temporary data folder would make outputs differ from run to run)."""
    try:
        relative = Path(os.path.relpath(path.resolve(), Path.cwd().resolve()))
    except ValueError:
        relative = None
    if relative is not None and not str(relative).startswith(".."):
        return str(relative)
    return f"{path.name} in AgentMagics.data_dir"


def split_ref(text: str, what: str, prog: str) -> tuple[str, str]:
    """``SERVER:REST`` → (server, rest); the server's name has no colon, the rest may."""
    server, sep, rest = text.partition(":")
    if not sep or not server or not rest:
        raise UsageError(f"{prog}: give {what} as SERVER:{'URI' if what == 'a resource' else 'NAME'}, got {text!r}")
    return server, rest


def check_server(magics: Any, server: str, prog: str) -> None:
    """A usage error for a server ``mcp.json`` does not list (and the kernel's sampler
    installed: a server may ask for a completion while it answers)."""
    from ...mcp.config import load_servers

    _install_sampler(magics)
    path = config_file(magics)
    servers = load_servers(path)[0]
    if server not in servers:
        names = ", ".join(sorted(servers)) or "none; add one with %agent mcp add"
        raise UsageError(f"{prog}: no MCP server {server!r} in {shown(path)} (servers: {names})")


def cmd_resources(magics: Any, args: list[str]) -> None:
    """One row per resource (and resource template, marked) of the running servers."""
    from ...mcp.manager import kernel_manager

    server = _one_server(magics, args, "%agent mcp resources")
    _install_sampler(magics)
    items = [r for r in kernel_manager().resources(config_file(magics), report=print) if server in (None, r.server)]
    if not items:
        print(f"no MCP resources{f' on {server!r}' if server else ''}")
        return
    rows = [(str(r.server), str(r.uri) + (" (template)" if r.template else ""), _label(r.name, r.title),
             _clip(r.mime_type or "", MIME_WIDTH)) for r in items]
    _table(("server", "uri", "name", "mime"), rows)
    print("attach one to a turn: %%agent --resource SERVER:URI   (print it: %agent mcp read SERVER:URI)")


def cmd_read(magics: Any, args: list[str]) -> None:
    """Print one resource's text (what ``--resource`` attaches)."""
    from ...agent.images import ToolResult
    from ...agent.tools import ToolError
    from ...mcp.manager import kernel_manager

    if len(args) != 1:
        raise UsageError("%agent mcp read SERVER:URI: give exactly one resource")
    server, uri = split_ref(args[0], "a resource", "%agent mcp read")
    check_server(magics, server, "%agent mcp read")
    manager = kernel_manager()
    manager.tools(config_file(magics), report=print)  # starts it, as a turn would
    try:
        content = manager.read_resource(server, uri)
    except ToolError as exc:
        raise UsageError(f"%agent mcp read {args[0]}: {exc}") from None
    print(content.text if isinstance(content, ToolResult) else content)


def cmd_prompts(magics: Any, args: list[str]) -> None:
    """One row per prompt: its arguments (``*`` required) and description."""
    from ...mcp.manager import kernel_manager

    server = _one_server(magics, args, "%agent mcp prompts")
    _install_sampler(magics)
    items = [p for p in kernel_manager().prompts(config_file(magics), report=print) if server in (None, p.server)]
    if not items:
        print(f"no MCP prompts{f' on {server!r}' if server else ''}")
        return
    rows = [(str(p.server), str(p.name), ", ".join(a.name + ("*" if a.required else "") for a in p.arguments) or "-",
             _first_line(p.description or p.title or "")) for p in items]
    _table(("server", "prompt", "arguments (* required)", "description"), rows)
    print("start a turn from one: %%agent --mcp-prompt SERVER:NAME --arg KEY=VALUE ...")


def _install_sampler(magics: Any) -> None:
    from ..sampling import kernel_sampler

    kernel_sampler(magics)


def _one_server(magics: Any, args: list[str], prog: str) -> str | None:
    if len(args) > 1:
        raise UsageError(f"{prog} [SERVER]: give at most one server name")
    if args:
        check_server(magics, args[0], prog)
        return args[0]
    return None


def _label(name: str, title: str | None) -> str:
    return f"{title} ({name})" if title and title != name else name


def _first_line(text: str, width: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return _clip(line, width)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Columns padded to their widest cell; the last column is left as it is."""
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
    for row in [head, *rows]:
        cells = [cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True)]
        print("  " + "  ".join([*cells, row[-1]]).rstrip())
