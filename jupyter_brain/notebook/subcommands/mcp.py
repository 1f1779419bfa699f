"""``%agent mcp add / list / remove / restart``: the MCP servers whose tools the agent gets
(``resources``, ``read`` and ``prompts``: ``mcp_catalog.py``).

The servers are kept in ``<data_dir>/mcp.json`` (the ``mcpServers`` format of Claude
Desktop and VS Code); they start with the next turn that offers tools. Env and header
values are never printed: only their names.
"""

from __future__ import annotations

import sys
from typing import Any

from IPython.core.error import UsageError

from . import mcp_catalog
from .mcp_catalog import config_file as _path
from .mcp_catalog import shown as _shown

USAGE = (
    "%agent mcp add NAME [--env KEY[=VALUE] ...] -- COMMAND [ARGS ...]   (a stdio server)\n"
    "%agent mcp add NAME [--header KEY=VALUE ...] URL                    (streamable HTTP)\n"
    "%agent mcp list | remove NAME | restart NAME\n"
    "%agent mcp resources [SERVER] | read SERVER:URI | prompts [SERVER]\n"
    "%%agent --resource SERVER:URI attaches a resource to the turn; --mcp-prompt SERVER:NAME\n"
    "[--arg KEY=VALUE ...] starts it from a server's prompt (the cell body follows it).\n"
    "--env KEY passes the kernel's $KEY to the server (saved as ${KEY}, resolved at start);\n"
    "values may hold such ${VAR} references. The servers live in <data_dir>/mcp.json."
)


def cmd_mcp(magics: Any, rest: list[str]) -> None:
    action, args = (rest[0].lower(), rest[1:]) if rest else ("list", [])
    handler = {"add": _add, "list": _list, "ls": _list, "remove": _remove, "rm": _remove,
               "restart": _restart, "resources": mcp_catalog.cmd_resources, "read": mcp_catalog.cmd_read,
               "prompts": mcp_catalog.cmd_prompts, "help": lambda magics, args: print(USAGE)}.get(action)
    if handler is None:
        raise UsageError(f"%agent mcp: unknown action {action!r}\n{USAGE}")
    handler(magics, args)


def _add(magics: Any, args: list[str]) -> None:
    from ...mcp.config import ConfigError, save_server

    if not args:
        raise UsageError(f"%agent mcp add: give a NAME\n{USAGE}")
    name, args = args[0], args[1:]
    if "--" in args:
        options, command = args[: args.index("--")], args[args.index("--") + 1 :]
        if not command:
            raise UsageError("%agent mcp add: give the server's command after --")
        entry: dict[str, Any] = {"command": command[0], "args": command[1:]}
        pairs = _pairs(options, "--env", bare_ok=True)
        if pairs:
            entry["env"] = pairs
    else:
        urls = [a for a in args if a.startswith(("http://", "https://"))]
        if len(urls) != 1:
            raise UsageError(f"%agent mcp add: give a URL, or -- and the command of a stdio server\n{USAGE}")
        options = [a for a in args if a != urls[0]]
        entry = {"type": "http", "url": urls[0]}
        pairs = _pairs(options, "--header")
        if pairs:
            entry["headers"] = pairs
    path = _path(magics)
    try:
        replaced = save_server(path, name, entry)
    except ConfigError as exc:
        raise UsageError(f"%agent mcp add: {exc}") from None
    _forget(name)  # a changed entry restarts with the next turn
    print(f"{'replaced' if replaced else 'added'} MCP server {name!r} in {_shown(path)}; "
          "it starts with the next %%agent turn (or `%agent tools`)")


def _pairs(options: list[str], flag: str, *, bare_ok: bool = False) -> dict[str, str]:
    """``FLAG KEY=VALUE`` pairs; with ``bare_ok``, ``FLAG KEY`` means ``KEY=${KEY}``."""
    pairs: dict[str, str] = {}
    for i in range(0, len(options), 2):
        item = options[i + 1] if i + 1 < len(options) else ""
        if options[i] != flag or not item or ("=" not in item and not (bare_ok and item.isidentifier())):
            raise UsageError(f"%agent mcp add: unexpected {options[i]!r}; options are {flag} KEY=VALUE\n{USAGE}")
        key, value = item.split("=", 1) if "=" in item else (item, "${" + item + "}")
        pairs[key] = value
    return pairs


def _list(magics: Any, args: list[str]) -> None:
    from ...mcp.config import load_servers, read_document

    path = _path(magics)
    servers, errors = load_servers(path)
    try:
        raw = read_document(path)
    except ValueError:
        raw = {}
    disabled = [n for n, e in (raw.get("mcpServers") or raw.get("servers") or {}).items()
                if isinstance(e, dict) and e.get("disabled")]
    if not servers and not errors and not disabled:
        print(f"no MCP servers in {_shown(path)}; add one with\n{USAGE}")
        return
    live = _live_connections()
    rows = []
    for name, config in servers.items():
        connection = live.get(name)
        state = connection.state if connection is not None and connection.config == config else "not started"
        tools = str(len(connection.tools)) if connection is not None and state == "running" else "-"
        rows.append((name, config.transport, state, tools, config.summary()))
        if connection is not None and state == "running" and connection.protocol:
            rows[-1] = (*rows[-1][:4], f"{rows[-1][4]}  (MCP {connection.protocol})")
        if connection is not None and state in ("failed", "crashed") and connection.error:
            rows.append(("", "", "", "", connection.error))
        if connection is not None and connection.config == config:
            rows += [("", "", "", "", note) for note in connection.notes]
    rows += [(name, "", "disabled", "-", "") for name in disabled]
    rows += [(name, "", "invalid", "-", error) for name, error in errors.items()]
    widths = [max(len(r[i]) for r in [("server", "type", "state", "tools", ""), *rows]) for i in range(4)]
    print(f"MCP servers in {_shown(path)}:")
    for row in [("server", "type", "state", "tools", "command / url"), *rows]:
        if not row[0] and not row[2]:  # an error under its server
            for line in row[4].splitlines():
                print(" " * (sum(widths) + 10) + line)
            continue
        print("  " + "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)) + "  " + row[4])


def _remove(magics: Any, args: list[str]) -> None:
    from ...mcp.config import remove_server

    if len(args) != 1:
        raise UsageError("%agent mcp remove NAME: give exactly one server name")
    path = _path(magics)
    if not remove_server(path, args[0]):
        raise UsageError(f"%agent mcp remove: no server {args[0]!r} in {_shown(path)}")
    _forget(args[0])
    print(f"removed MCP server {args[0]!r} (stopped if it was running)")


def _restart(magics: Any, args: list[str]) -> None:
    from ...mcp.config import load_servers
    from ...mcp.manager import kernel_manager

    if len(args) != 1:
        raise UsageError("%agent mcp restart NAME: give exactly one server name")
    path = _path(magics)
    if args[0] not in load_servers(path)[0]:
        raise UsageError(f"%agent mcp restart: no server {args[0]!r} in {_shown(path)}")
    manager = kernel_manager()
    manager.stop(args[0])
    manager.tools(path, report=print)
    connection = manager.connections.get(args[0])
    if connection is not None and connection.state == "running":
        print(f"MCP server {args[0]!r} is running with {len(connection.tools)} tools")


def _live_connections() -> dict[str, Any]:
    manager = sys.modules.get("jupyter_brain.mcp.manager")
    kernel = getattr(manager, "_KERNEL", None)
    return dict(kernel.connections) if kernel is not None else {}


def _forget(name: str) -> None:
    """Stop a server whose entry changed or went away (a turn would do it too)."""
    manager = sys.modules.get("jupyter_brain.mcp.manager")
    kernel = getattr(manager, "_KERNEL", None)
    if kernel is not None and name in kernel.connections:
        kernel.stop(name)
