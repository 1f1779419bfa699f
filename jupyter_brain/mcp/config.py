"""The MCP servers of a project: ``<data_dir>/mcp.json`` in the ``mcpServers`` format.

The same format Claude Desktop, Claude Code, Cursor and VS Code use, so an existing
configuration can be pasted in::

    {"mcpServers": {
        "time":   {"command": "python", "args": ["-m", "mcp_server_time"], "env": {"TZ": "${TZ}"}},
        "remote": {"type": "http", "url": "https://example.com/mcp",
                   "headers": {"Authorization": "Bearer ${API_TOKEN}"}}}}

``${VAR}``, ``${VAR:-default}`` and ``${env:VAR}`` (VS Code) are resolved from the
environment when the server starts; the file keeps the references, and nothing here
prints or logs a resolved value. Plain Python (no SDK import): the magics read this.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFIG_NAME = "mcp.json"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
HTTP_TYPES = ("http", "streamable-http", "streamable_http", "streamableHttp")
_REFERENCE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_SECRET_NAME = re.compile(r"(?i)key|token|secret|passw|auth|credential|cookie")


class ConfigError(ValueError):
    """The configuration of a server cannot be used as written."""


@dataclass(frozen=True)
class ServerConfig:
    """One entry of ``mcpServers``, checked; values still hold their ``${VAR}`` references."""

    name: str
    transport: str  # "stdio" | "http"
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    tool_timeout_s: float | None = None
    startup_timeout_s: float | None = None
    disabled: bool = False
    raw: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def from_entry(cls, name: str, entry: Any) -> ServerConfig:
        if not NAME_PATTERN.match(name):
            raise ConfigError(f"server name {name!r}: use 1-40 letters, digits, '_' or '-'")
        if not isinstance(entry, Mapping):
            raise ConfigError(f"server {name!r}: expected an object, got {type(entry).__name__}")
        kind = str(entry.get("type") or entry.get("transport") or ("http" if "url" in entry else "stdio"))
        common: dict[str, Any] = {
            "name": name,
            "tool_timeout_s": _seconds(entry, "tool_timeout_s", name),
            "startup_timeout_s": _seconds(entry, "startup_timeout_s", name),
            "disabled": bool(entry.get("disabled", False)),
            "raw": dict(entry),
        }
        if kind == "stdio":
            command = entry.get("command")
            if not isinstance(command, str) or not command.strip():
                raise ConfigError(f"server {name!r}: a stdio server needs a 'command'")
            args = entry.get("args") or []
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                raise ConfigError(f"server {name!r}: 'args' must be a list of strings")
            cwd = entry.get("cwd")
            return cls(transport="stdio", command=command, args=tuple(args), env=_pairs(entry, "env", name),
                       cwd=str(cwd) if cwd else None, **common)
        if kind in HTTP_TYPES:
            url = entry.get("url")
            if not isinstance(url, str) or not re.match(r"^https?://", url):
                raise ConfigError(f"server {name!r}: an http server needs a 'url' starting with http:// or https://")
            return cls(transport="http", url=url, headers=_pairs(entry, "headers", name), **common)
        if kind == "sse":
            raise ConfigError(f"server {name!r}: the SSE transport is deprecated and not supported; "
                              "use the server's streamable HTTP endpoint (type 'http')")
        raise ConfigError(f"server {name!r}: unknown type {kind!r} (use 'stdio' or 'http')")

    def resolved_env(self, environ: Mapping[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
        """The ``env`` with references resolved, and the values that came from references."""
        return _resolve_pairs(self.env, environ)

    def resolved_headers(self, environ: Mapping[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
        return _resolve_pairs(self.headers, environ)

    def resolved_args(self, environ: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
        secrets: list[str] = []
        return [resolve(a, environ, secrets) for a in self.args], secrets

    def resolved_url(self, environ: Mapping[str, str] | None = None) -> tuple[str, list[str]]:
        secrets: list[str] = []
        return resolve(self.url, environ, secrets), secrets

    def summary(self) -> str:
        """One line for ``%agent mcp list``: never an env or header value."""
        if self.transport == "http":
            text = re.sub(r"//[^/@]*@", "//", self.url)  # no userinfo
            if self.headers:
                text += f"  headers: {', '.join(k for k, _ in self.headers)}"
            return text
        command = Path(self.command).name if os.path.isabs(self.command) else self.command
        text = " ".join([command, *self.args])
        if self.env:
            text += f"  env: {', '.join(k for k, _ in self.env)}"
        return text


def resolve(value: str, environ: Mapping[str, str] | None = None, secrets: list[str] | None = None) -> str:
    """``${VAR}``, ``${VAR:-default}``, ``${env:VAR}`` from the environment; a missing
    variable without a default is an error (a server started with an empty token fails
    in confusing ways)."""
    env = os.environ if environ is None else environ

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            text = env[name]
        elif default is not None:
            text = default
        else:
            raise ConfigError(f"environment variable {name} is not set")
        if secrets is not None and text:
            secrets.append(text)
        return text

    return _REFERENCE.sub(substitute, value)


def config_path(data_dir: str | os.PathLike[str] = ".jupyter_brain") -> Path:
    return Path(data_dir) / CONFIG_NAME


def read_document(path: Path) -> dict[str, Any]:
    """The whole JSON document (other keys are kept when we write)."""
    if not path.exists():
        return {}
    try:
        document = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: expected a JSON object with 'mcpServers'")
    return document


def _entries(document: dict[str, Any]) -> dict[str, Any]:
    servers = document.get("mcpServers", document.get("servers", {}))  # "servers": VS Code's mcp.json
    if not isinstance(servers, dict):
        raise ConfigError("'mcpServers' must be an object of name -> server")
    return servers


def load_servers(path: Path) -> tuple[dict[str, ServerConfig], dict[str, str]]:
    """The usable servers (disabled ones left out), and an error per server that is not."""
    servers: dict[str, ServerConfig] = {}
    errors: dict[str, str] = {}
    try:
        entries = _entries(read_document(path))
    except ConfigError as exc:
        return {}, {"(config)": str(exc)}
    for name, entry in entries.items():
        try:
            config = ServerConfig.from_entry(str(name), entry)
        except ConfigError as exc:
            errors[str(name)] = str(exc)
            continue
        if not config.disabled:
            servers[config.name] = config
    return servers, errors


def save_server(path: Path, name: str, entry: dict[str, Any]) -> bool:
    """Add or replace one server; True when it replaced one. Checked before writing."""
    ServerConfig.from_entry(name, entry)
    document = read_document(path)
    key = "mcpServers" if "mcpServers" in document or "servers" not in document else "servers"
    servers = document.setdefault(key, {})
    replaced = name in servers
    servers[name] = entry
    _write(path, document)
    return replaced


def remove_server(path: Path, name: str) -> bool:
    document = read_document(path)
    servers = _entries(document)
    if name not in servers:
        return False
    del servers[name]
    _write(path, document)
    return True


def _write(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _pairs(entry: Mapping[str, Any], key: str, name: str) -> tuple[tuple[str, str], ...]:
    value = entry.get(key) or {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str | int | float) for v in value.values()):
        raise ConfigError(f"server {name!r}: {key!r} must be an object of name -> string")
    return tuple((str(k), str(v)) for k, v in value.items())


def _seconds(entry: Mapping[str, Any], key: str, name: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"server {name!r}: {key!r} must be a positive number of seconds")
    return float(value)


def _resolve_pairs(pairs: tuple[tuple[str, str], ...],
                   environ: Mapping[str, str] | None) -> tuple[dict[str, str], list[str]]:
    secrets: list[str] = []
    resolved = {key: resolve(value, environ, secrets) for key, value in pairs}
    # A token pasted into the file is as secret as a reference (but not LOG_LEVEL=debug).
    secrets += [v for k, v in resolved.items() if v and _SECRET_NAME.search(k)]
    return resolved, secrets
