"""Outside agents in the live notebook: jupyter-brain's MCP endpoint on the Jupyter server.

The one entry point: the Jupyter server extension (enabled by the wheel's
``etc/jupyter/jupyter_server_config.d/jupyter_brain.json``). It serves MCP over Streamable
HTTP at ``{base_url}jupyter-brain/mcp``, behind the server's own authentication, with the
tools of ``tool_specs.py`` working through the gate of ``gate.py`` (``JupyterBrainMCP``
settings). ``jupyter-brain mcp`` (``stdio_proxy.py``) is the stdio form for clients that
speak only stdio. Imports no IPython, widgets or notebook layer (tests/test_import_rules.py).
"""

from __future__ import annotations

from typing import Any

from .config import JupyterBrainMCP

MCP_ROUTE = "jupyter-brain/mcp"

__all__ = ["MCP_ROUTE", "JupyterBrainMCP", "_jupyter_server_extension_points", "_load_jupyter_server_extension"]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "jupyter_brain.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Add the MCP route to ``serverapp``; its pieces are built here, once per server."""
    from jupyter_server.utils import url_path_join

    from .approval_handlers import approval_handlers
    from .approvals import Approvals
    from .audit import AuditTrail
    from .endpoint import McpEndpoint
    from .http_bridge import McpHandler
    from .kernels import NotebookKernels
    from .live_document import LiveDocuments
    from .notebook_tools import NotebookTools
    from .notebooks import NotebookStore

    settings = JupyterBrainMCP(parent=serverapp)
    if not settings.enabled:
        serverapp.log.info("jupyter-brain: the MCP endpoint is off (JupyterBrainMCP.enabled = False)")
        return
    store = NotebookStore(lambda: serverapp.contents_manager, serverapp.root_dir)  # jupytext replaces it after us
    approvals = Approvals(settings.approval_timeout)
    documents = LiveDocuments(serverapp, store)  # the open document (jupyter-collaboration), else the file
    tools = NotebookTools(store, NotebookKernels(serverapp), settings, AuditTrail(), approvals, documents)
    endpoint = McpEndpoint(tools)
    route = url_path_join(serverapp.base_url, MCP_ROUTE)
    serverapp.web_app.add_handlers(".*$", [(route, McpHandler, {"endpoint": endpoint}),
                                           *approval_handlers(serverapp.base_url, approvals)])
    serverapp.web_app.settings["jupyter_brain_mcp"] = endpoint
    _stop_with(serverapp, endpoint)
    serverapp.log.info(f"jupyter-brain: MCP endpoint at {route} (permission: {settings.permission})")


def _stop_with(serverapp: Any, endpoint: Any) -> None:
    """``endpoint.stop()`` (unsaved edits written) when the server shuts down. A module extension
    has no shutdown hook of its own (only ExtensionApps do), so it runs first in the server's
    ``cleanup_extensions``, which the server's ``_cleanup`` calls before it stops the kernels."""
    cleanup = serverapp.cleanup_extensions

    async def cleanup_extensions() -> None:
        try:
            await endpoint.stop()
        except Exception:  # the server's own cleanup must still run
            serverapp.log.exception("jupyter-brain: stopping the MCP endpoint failed")
        await cleanup()

    serverapp.cleanup_extensions = cleanup_extensions
