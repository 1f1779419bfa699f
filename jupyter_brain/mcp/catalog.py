"""A server's resources and prompts: listed, read, filled in (``%agent mcp resources``,
``--resource server:uri``, ``%agent mcp prompts``, ``--mcp-prompt server:name``).

The listings are plain frozen dataclasses, so the notebook side needs no SDK type. Reading
a resource gives text the way a tool's embedded resource reads (``results.py``); a prompt
gives (role, text) messages. Failures are ``ToolError``s with a one-line message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..agent.artifacts import ArtifactStore
from ..agent.images import ToolResult
from ..agent.tools import ToolError
from .results import render_rich

MAX_PAGES = 50


@dataclass(frozen=True)
class ResourceInfo:
    server: str
    uri: str  # a template's uriTemplate when ``template``
    name: str
    title: str | None
    description: str | None
    mime_type: str | None
    template: bool


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str | None
    required: bool


@dataclass(frozen=True)
class PromptInfo:
    server: str
    name: str
    title: str | None
    description: str | None
    arguments: tuple[PromptArgument, ...]


def has_capability(client: Any, name: str) -> bool:
    try:
        return getattr(client.server_capabilities, name, None) is not None
    except RuntimeError:
        return False


async def paged(fetch: Callable[[str | None], Awaitable[Any]], items: str) -> list[Any]:
    """Every page of a listing (``fetch(cursor)``), at most ``MAX_PAGES`` of them."""
    found: list[Any] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        found += getattr(page, items)
        cursor = page.next_cursor
        if not cursor:
            break
    return found


async def list_resources(server: str, client: Any) -> list[ResourceInfo]:
    """Resources, then resource templates (a server that lists no templates has none)."""
    from mcp.shared.exceptions import MCPError

    found = [ResourceInfo(server, str(r.uri), r.name, getattr(r, "title", None), r.description, r.mime_type, False)
             for r in await paged(lambda cursor: client.list_resources(cursor=cursor), "resources")]
    try:
        templates = await paged(lambda cursor: client.list_resource_templates(cursor=cursor), "resource_templates")
    except MCPError:  # templates are optional: "method not found" means none
        templates = []
    return found + [ResourceInfo(server, t.uri_template, t.name, getattr(t, "title", None), t.description,
                                 t.mime_type, True) for t in templates]


async def list_prompts(server: str, client: Any) -> list[PromptInfo]:
    return [PromptInfo(server, p.name, getattr(p, "title", None), p.description,
                       tuple(PromptArgument(a.name, a.description, bool(a.required)) for a in p.arguments or []))
            for p in await paged(lambda cursor: client.list_prompts(cursor=cursor), "prompts")]


def resource_text(server: str, uri: str, result: Any, artifacts: ArtifactStore) -> str | ToolResult:
    """``resources/read``'s contents: text verbatim under a ``[resource URI]`` header,
    binary content saved as an artifact (images attached, as from a tool)."""
    from mcp_types import CallToolResult, EmbeddedResource

    contents = list(getattr(result, "contents", None) or [])
    if not contents:
        raise ToolError(f"MCP server '{server}' returned no contents for {uri}")
    blocks = [EmbeddedResource(type="resource", resource=c) for c in contents]
    rich = render_rich(CallToolResult(content=blocks), artifacts)  # type: ignore[arg-type]
    return ToolResult(rich.text, rich.images) if rich.images else rich.text


def prompt_messages(result: Any, artifacts: ArtifactStore) -> list[tuple[str, str]]:
    """(role, text) per message; resources and images as the notes a tool result has."""
    from mcp_types import CallToolResult

    messages = []
    for message in result.messages:
        text = render_rich(CallToolResult(content=[message.content]), artifacts).text
        messages.append((str(message.role), text))
    return messages


def missing_arguments(prompt: PromptInfo, arguments: dict[str, str]) -> list[str]:
    return [a.name for a in prompt.arguments if a.required and a.name not in arguments]
