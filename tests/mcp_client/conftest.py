"""Fixtures for the MCP tests: real servers (the demo server of this folder over stdio and
over streamable HTTP, and the third-party ``mcp-server-time``), never protocol mocks.

Tests that start server processes carry the ``mcp_server`` mark (each start is ~1 s).
Waits are bounded generously, only so that a broken behaviour fails instead of hanging;
how fast things happen is measured by benchmarks/mcp_bounds.py, never asserted.
"""

from __future__ import annotations

import pytest

from .servers import exit_code, start_http_demo


def pytest_configure(config):
    config.addinivalue_line("markers", "mcp_server: starts real MCP server processes (about 1 s each)")


@pytest.fixture()
def manager(tmp_path):
    from jupyter_brain.mcp.manager import MCPManager

    m = MCPManager(startup_timeout_s=120)  # a bound on a start only: a loaded machine starts servers slowly
    yield m
    m.shutdown()


@pytest.fixture()
def http_server():
    """The demo server over streamable HTTP on 127.0.0.1 (on a socket handed over: no port
    race); yields (url, process)."""
    url, proc = start_http_demo()
    yield url, proc
    proc.kill()
    exit_code(proc)


@pytest.fixture()
def shutdown_kernel_mcp():
    """The process-wide manager used by %%agent, shut down after the test."""
    from jupyter_brain.mcp.manager import shutdown_kernel_manager

    yield
    shutdown_kernel_manager()
