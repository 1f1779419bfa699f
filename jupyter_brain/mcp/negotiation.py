"""What the kernel's MCP client declares, per protocol revision, and the way out when a
server refuses it.

The SDK's ``Client`` negotiates the revision itself (``mode="auto"``): a stateless
``server/discover`` first (2026-07-28), the ``initialize`` handshake as the fallback.
jupyter-brain declares elicitation, the ``io.modelcontextprotocol/tasks`` extension
(``task_extension.py``) and, on the handshake revisions only, roots and sampling: the
2026-07-28 revision deprecates both, so they are not declared to such a server (a request it
still sends, as an ``input_required`` result, is still answered). A server that refuses
them anyway (an error on ``initialize`` or on a request) is connected to again without
them; the connection keeps one note that says so (``%agent mcp``, the turn's report).
"""

from __future__ import annotations

from typing import Any

DEPRECATED_CAPABILITIES = ("roots", "sampling")


def open_client(target: Any, *, offer_deprecated: bool, **options: Any) -> Any:
    """An SDK ``Client`` (not yet entered) with the tasks extension, declaring roots and
    sampling only to a handshake-era server and only while ``offer_deprecated``."""
    from mcp import Client
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from .task_extension import tasks_extension

    class DeclaringClient(Client):
        async def _build_session(self, exit_stack: Any) -> Any:
            session = await super()._build_session(exit_stack)
            build = session._build_capabilities

            def capabilities(version: str) -> Any:
                declared = build(version)
                if version in MODERN_PROTOCOL_VERSIONS or not offer_deprecated:
                    declared = declared.model_copy(update={"roots": None, "sampling": None})
                return declared

            session._build_capabilities = capabilities  # type: ignore[method-assign]
            return session

    return DeclaringClient(target, extensions=[tasks_extension()], **options)


def server_refused(exc: BaseException) -> bool:
    """The server answered with an error (as opposed to a crash, a timeout, a lost transport)."""
    from mcp.shared.exceptions import MCPError

    seen = 0
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions and seen < 10:
        exc, seen = exc.exceptions[0], seen + 1
    return isinstance(exc, MCPError) and exc.code != _connection_closed()


def names_deprecated(message: str) -> bool:
    """An error message that blames roots or sampling (a refused request's retry is worth it)."""
    lowered = message.lower()
    return any(word in lowered for word in DEPRECATED_CAPABILITIES)


def refusal_note(server: str, error: str) -> str:
    return (f"MCP server '{server}' refused the roots and sampling capabilities ({error.rstrip('.')}); "
            "connected without them: it cannot ask for roots or sampling.")


def modern(client: Any) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    try:
        return client.protocol_version in MODERN_PROTOCOL_VERSIONS
    except RuntimeError:
        return False


def _connection_closed() -> int:
    from mcp_types import CONNECTION_CLOSED

    return int(CONNECTION_CLOSED)
