"""MCP tools as ``ToolSpec``s: named ``SERVER__tool``, described and typed by the server.

From there on an MCP tool is like any other: the registry's permission rules (a
``readOnlyHint`` tool reads; any other asks), ``%agent allow/deny NAME``, argument
validation and repair, the executor's timeout and artifact offloading, tool selection.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from functools import cached_property
from typing import Any

from pydantic import BaseModel

from ..agent.tools import TOOL_CALL_TIMEOUT_S, ToolEffect, ToolSpec
from .schema import args_model

MAX_NAME = 64  # the tool-name limit of the provider APIs


class MCPToolSpec(ToolSpec):
    """A ToolSpec whose schema is the server's, and whose call sends only the arguments
    the model gave (the server applies its own defaults)."""

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        return self.metadata["mcp_input_schema"]

    def invoke(self, validated: BaseModel) -> Any:
        return self.fn(**validated.model_dump(by_alias=True, exclude_unset=True))

    def __repr__(self) -> str:
        return f"MCPToolSpec(name={self.name!r}, effect={self.effect!r})"


def tool_name(server: str, tool: str) -> str:
    """``SERVER__tool`` with only letters, digits, ``_`` and ``-``, at most 64 characters."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}__{tool}")
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


def effect_of(tool: Any) -> ToolEffect:
    """``readOnlyHint`` true → read (always allowed); anything else goes through the
    permission mode like a writing tool (asks in ``ask``, refused in ``read-only``)."""
    annotations = getattr(tool, "annotations", None)
    return "read" if getattr(annotations, "read_only_hint", None) is True else "write"


def tool_spec(server: str, tool: Any, call: Callable[..., Any], *, timeout_s: float | None = None,
              taken: set[str] | None = None) -> MCPToolSpec:
    """One MCP tool (``mcp_types.Tool``) as a spec; ``call(**arguments)`` runs it."""
    name = tool_name(server, tool.name)
    if taken is not None:
        base, n = name, 2
        while name in taken:
            suffix = f"_{n}"
            name, n = base[: MAX_NAME - len(suffix)] + suffix, n + 1
        taken.add(name)
    schema = dict(tool.input_schema or {"type": "object", "properties": {}})
    schema.setdefault("type", "object")
    schema.pop("title", None)
    annotations = getattr(tool, "annotations", None)
    title = getattr(tool, "title", None) or getattr(annotations, "title", None)
    description = (tool.description or title or f"{tool.name} (from the MCP server '{server}')").strip()
    effect = effect_of(tool)
    metadata = {
        "tool_timeout_s": float(timeout_s or TOOL_CALL_TIMEOUT_S),
        # A second call while the first still runs on the server would do its work twice.
        "retry_on_timeout": False,
        "mcp_server": server,
        "mcp_tool": tool.name,
        "mcp_input_schema": schema,
        "mcp_annotations": annotations.model_dump(exclude_none=True) if annotations is not None else {},
    }
    return MCPToolSpec(name=name, description=description, fn=call, args_model=args_model(name, schema),
                       effect=effect, metadata=metadata)
