"""The MCP Inspector CLI (a client nobody here wrote; pinned in tests/server/npm) lists and
calls the endpoint's tools, and sees a bad path as the tool's error."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .jupyter import RunningServer, write_notebook

NPM_DIR = Path(__file__).with_name("npm")
pytestmark = pytest.mark.kernel


def inspector(server: RunningServer, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    bin_path = NPM_DIR / "node_modules" / ".bin" / "mcp-inspector"
    if not bin_path.exists():
        message = f"the MCP Inspector is not installed: run `npm ci` in {NPM_DIR}"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    command = [str(bin_path), "--cli", "--transport", "http", "--server-url", server.endpoint,
               "--header", f"Authorization: token {server.token}", *args]
    env = {**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "catalog.json"), "HOME": str(tmp_path)}
    return subprocess.run(command, capture_output=True, text=True, timeout=180, env=env)


def test_the_inspector_lists_and_calls_the_tools(auto_server: RunningServer, tmp_path: Path) -> None:
    write_notebook(auto_server.root / "insp.ipynb", ["x = 1", "print('hello from the inspector')"])
    listed = inspector(auto_server, tmp_path, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    names = [t["name"] for t in json.loads(listed.stdout)["tools"]]
    assert names[:3] == ["list_notebooks", "read_notebook", "read_cell"] and len(names) == 11

    ran = inspector(auto_server, tmp_path, "--method", "tools/call", "--tool-name", "execute_cell",
                    "--tool-arg", "path=insp.ipynb", "index=1")
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert result["isError"] is False and "hello from the inspector" in result["content"][0]["text"]

    refused = inspector(auto_server, tmp_path, "--method", "tools/call", "--tool-name", "read_notebook",
                        "--tool-arg", "path=../insp.ipynb")
    payload = json.loads(refused.stdout[: refused.stdout.rindex("}") + 1].split("\n{\"error\"")[0])
    assert payload["isError"] is True and "'..'" in payload["content"][0]["text"]
