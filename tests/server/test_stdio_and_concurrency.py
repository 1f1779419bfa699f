"""``jupyter-brain mcp`` (stdio) in front of a running server, found by --url or as
``jupyter server list`` finds it; and several clients editing one notebook at once."""

from __future__ import annotations

import os
import sys

import anyio
import nbformat
import pytest

from .jupyter import RunningServer, _call_tools, saved_notebook, write_notebook

pytestmark = pytest.mark.kernel


async def _over_stdio(args: list[str], cwd: str, env: dict[str, str]) -> tuple[list[str], str, str]:
    from mcp import Client, StdioServerParameters, stdio_client
    from mcp_types import Implementation

    params = StdioServerParameters(command=sys.executable, args=["-m", "jupyter_brain.server.stdio_proxy", "mcp", *args],
                                   cwd=cwd, env=env)
    async with Client(stdio_client(params), client_info=Implementation(name="stdio-agent", version="1")) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        inserted = await client.call_tool("insert_cell", {"path": "s.ipynb", "source": "print(6 * 7)"})
        ran = await client.call_tool("execute_cell", {"path": "s.ipynb", "index": -1})
        return names, inserted.content[0].text, ran.content[0].text


def _env(server: RunningServer) -> dict[str, str]:
    from .jupyter import ROOT

    return {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_RUNTIME_DIR": str(server.root.parent / "runtime"),
            "JUPYTER_PLATFORM_DIRS": "1"}


def test_the_stdio_form_proxies_to_the_server_named_by_url(auto_server: RunningServer) -> None:
    write_notebook(auto_server.root / "s.ipynb", [])
    names, inserted, ran = anyio.run(_over_stdio, ["--url", auto_server.url, "--token", auto_server.token],
                                     str(auto_server.root), _env(auto_server))
    assert "execute_cell" in names and len(names) == 11
    assert "Inserted a code cell" in inserted and "42" in ran
    cell = saved_notebook(auto_server.root / "s.ipynb", lambda nb: nb.cells and nb.cells[-1].outputs).cells[-1]
    assert cell.metadata["jupyter_brain"]["provenance"]["client"] == "stdio-agent"  # the client's own name passes


def test_the_stdio_form_finds_the_running_server_itself(auto_server: RunningServer) -> None:
    write_notebook(auto_server.root / "s.ipynb", [])
    names, inserted, ran = anyio.run(_over_stdio, [], str(auto_server.root), _env(auto_server))
    assert len(names) == 11 and "42" in ran


def test_clients_editing_one_notebook_at_once_lose_no_edit(auto_server: RunningServer) -> None:
    write_notebook(auto_server.root / "shared.ipynb", ["start = 0"])

    async def many() -> None:
        async with anyio.create_task_group() as group:
            for client in range(4):
                calls = [("insert_cell", {"path": "shared.ipynb", "source": f"c{client}_{i} = {i}"}) for i in range(5)]
                group.start_soon(_call_tools, auto_server, calls, f"agent-{client}", None)

    anyio.run(many)
    nb = saved_notebook(auto_server.root / "shared.ipynb", lambda nb: len(nb.cells) == 21)
    nbformat.validate(nb)
    sources = {c.source for c in nb.cells}
    assert sources == {"start = 0"} | {f"c{c}_{i} = {i}" for c in range(4) for i in range(5)}
    assert len({c.id for c in nb.cells}) == len(nb.cells) == 21


def test_unsaved_edits_are_written_when_the_notebook_is_opened_and_when_the_server_stops(tmp_path) -> None:
    """With saves put off for a minute (a sitecustomize in the server's path), an edit is read
    back at once yet not on disk; opening the notebook through the server's contents API (as a
    JupyterLab tab does; through jupytext's contents manager when it is installed, which
    replaces the server's after our extension loaded) writes it first, and so does SIGTERM."""
    import httpx

    from .jupyter import start_server

    patch = tmp_path / "patch"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(
        "import sys\n"
        "if 'jupyter_server' in ' '.join(sys.argv):\n"
        "    import jupyter_brain.server.notebooks as n\n"
        "    n.SAVE_DELAY_S = n.SAVE_MAX_DELAY_S = 60.0\n")
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root / "late.ipynb", ["x = 1"])
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(patch), old) if p)
    try:
        server = start_server(root, "--JupyterBrainMCP.permission=auto")
    finally:
        os.environ.pop("PYTHONPATH") if old is None else os.environ.__setitem__("PYTHONPATH", old)

    def on_disk() -> list[str]:
        return [c.source for c in nbformat.read(root / "late.ipynb", as_version=4).cells]

    try:
        inserted, read = anyio.run(_call_tools, server, [
            ("insert_cell", {"path": "late.ipynb", "source": "y = 2"}),
            ("read_notebook", {"path": "late.ipynb"})], "late-agent", None)
        assert "y = 2" in read.text and on_disk() == ["x = 1"]  # answered, not yet saved
        opened = httpx.get(server.url + "api/contents/late.ipynb?type=notebook&content=1",
                           headers={"Authorization": f"token {server.token}"}).json()
        assert [c["source"] for c in opened["content"]["cells"]] == ["x = 1", "y = 2"] == on_disk()
        anyio.run(_call_tools, server, [("insert_cell", {"path": "late.ipynb", "source": "z = 3"})], "late-agent", None)
        assert on_disk() == ["x = 1", "y = 2"]
    finally:
        server.stop()
    assert on_disk() == ["x = 1", "y = 2", "z = 3"]
