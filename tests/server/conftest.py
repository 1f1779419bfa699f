"""A real Jupyter server with the extension, one per module and permission (each start is
several seconds): the tests drive it with the MCP SDK's client, as an outside agent would."""

from __future__ import annotations

import pytest

from .jupyter import RunningServer, start_server


@pytest.fixture(scope="module")
def auto_server(tmp_path_factory: pytest.TempPathFactory) -> RunningServer:
    root = tmp_path_factory.mktemp("server") / "root"
    root.mkdir()
    server = start_server(root, "--JupyterBrainMCP.permission=auto", "--JupyterBrainMCP.max_output_chars=400")
    yield server
    server.stop()
