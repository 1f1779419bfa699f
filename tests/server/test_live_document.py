"""Outside agents edit the OPEN document when JupyterLab shares it (jupyter-collaboration):
a collaboration client (``shared_document.SharedNotebook``, as a tab) holds the notebook open
while MCP clients insert, edit and run cells; it sees their changes without reloading, its own
unsaved typing is kept, outputs reach its copy and (after the room's autosave) the file, and
nothing lands in another notebook. A notebook nobody has open is still edited as a file.

Runs where jupyter-collaboration is installed (the `collaboration` extra; see
scripts/test.sh), skipped elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest

from .jupyter import COLLABORATION, RunningServer, _call_tools, saved_notebook, start_server, write_notebook

pytest.importorskip("jupyter_server_ydoc", reason="jupyter-collaboration is not installed (the collaboration extra)")
pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def collab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("collab") / "root"
    root.mkdir()
    server = start_server(root, "--JupyterBrainMCP.permission=auto", "--YDocExtension.document_save_delay=0.3",
                          "--YDocExtension.file_poll_interval=0.5", extensions=COLLABORATION)
    yield server
    server.stop()


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _output_text(cell: dict[str, Any]) -> str:
    parts = []
    for output in cell.get("outputs", []):
        text = output.get("text", "") or output.get("data", {}).get("text/plain", "")
        parts.append("".join(text) if isinstance(text, list) else str(text))
    return "".join(parts)


def test_an_open_notebook_is_edited_live_and_the_users_typing_is_kept(collab_server: RunningServer) -> None:
    from .shared_document import SharedNotebook

    root = collab_server.root
    write_notebook(root / "open.ipynb", ["x = 1", "print('before')"])
    write_notebook(root / "other.ipynb", ["other = 1"])
    other_before = (root / "other.ipynb").read_text()

    async def scenario() -> tuple[list[Any], list[dict[str, Any]]]:
        async with SharedNotebook(collab_server, "open.ipynb") as tab:
            await tab.change(lambda nb: nb.ycells[0]["source"].__iadd__("  # typed by the user"))  # unsaved typing
            replies = await _call_tools(collab_server, [
                ("insert_cell", {"path": "open.ipynb", "source": "y = 6 * 7\nprint(y)"}),
                ("edit_cell", {"path": "open.ipynb", "index": 1, "source": "print('after')"}),
                ("execute_cell", {"path": "open.ipynb", "index": -1}),
                ("read_cell", {"path": "open.ipynb", "index": 0}),
            ], "live-agent", None)
            await tab.until(lambda nb: nb.cell_number == 3 and "42" in _output_text(nb.get_cell(2)),
                            "the inserted cell with its output")
            return replies, tab.cells()

    replies, cells = anyio.run(scenario)
    assert not any(r.is_error for r in replies), [r.text for r in replies]
    assert "42" in replies[2].text
    assert "typed by the user" in replies[3].text  # the agent reads the open document, unsaved typing included
    # what the tab shows, without reloading: the user's typing kept, the agent's edit and cell, the output
    assert _source(cells[0]) == "x = 1  # typed by the user"
    assert _source(cells[1]) == "print('after')"
    assert _source(cells[2]) == "y = 6 * 7\nprint(y)" and "42" in _output_text(cells[2])
    assert cells[2]["execution_count"] is not None
    assert cells[2]["metadata"]["jupyter_brain"]["provenance"]["client"] == "live-agent"
    # the room's autosave writes it all to the file; nothing landed in the other notebook
    saved = saved_notebook(root / "open.ipynb", lambda nb: len(nb.cells) == 3 and "42" in _output_text(nb.cells[2]))
    assert [_source(c) for c in saved.cells] == [_source(c) for c in cells]
    assert "42" in _output_text(saved.cells[2])
    assert saved.cells[2].metadata["jupyter_brain"]["provenance"]["client"] == "live-agent"
    nbformat.validate(saved)
    assert (root / "other.ipynb").read_text() == other_before
    # the file was never written under the room (which would reload it over the user's typing)
    assert "Out-of-band" not in collab_server.log.read_text()


def test_a_notebook_nobody_has_open_is_edited_as_a_file(collab_server: RunningServer) -> None:
    write_notebook(collab_server.root / "closed.ipynb", ["a = 1"])
    replies = anyio.run(_call_tools, collab_server, [
        ("insert_cell", {"path": "closed.ipynb", "source": "print(40 + 2)"}),
        ("execute_cell", {"path": "closed.ipynb", "index": -1}),
    ], "file-agent", None)
    assert not any(r.is_error for r in replies) and "42" in replies[1].text
    saved = saved_notebook(collab_server.root / "closed.ipynb", lambda nb: len(nb.cells) == 2 and nb.cells[1].outputs)
    assert _source(saved.cells[1]) == "print(40 + 2)" and _output_text(saved.cells[1]) == "42\n"


def test_two_clients_editing_an_open_notebook_at_once_keep_both_sets_of_edits(collab_server: RunningServer) -> None:
    from .shared_document import SharedNotebook

    write_notebook(collab_server.root / "busy.ipynb", ["start = 0"])
    edits = 6

    async def scenario() -> list[dict[str, Any]]:
        async with SharedNotebook(collab_server, "busy.ipynb") as tab:
            async with anyio.create_task_group() as group:
                for client in ("alpha", "beta"):
                    calls: list[tuple[str, dict[str, Any]]] = [
                        ("insert_cell", {"path": "busy.ipynb", "source": f"{client}_{i} = {i}"}) for i in range(edits)]
                    calls.append(("execute_cell", {"path": "busy.ipynb", "index": -1}))
                    group.start_soon(_call_tools, collab_server, calls, client, None)
                await tab.change(lambda nb: nb.ycells[0]["source"].__iadd__("  # the user, meanwhile"))
            await tab.until(lambda nb: nb.cell_number == 1 + 2 * edits, "both clients' cells")
            return tab.cells()

    cells = anyio.run(scenario)
    sources = [_source(c) for c in cells]
    for client in ("alpha", "beta"):
        assert [s for s in sources if s.startswith(client)] == [f"{client}_{i} = {i}" for i in range(edits)]
    assert sources[0] == "start = 0  # the user, meanwhile"
    saved = saved_notebook(Path(collab_server.root / "busy.ipynb"),
                           lambda nb: sorted(_source(c) for c in nb.cells) == sorted(sources))
    assert sorted(_source(c) for c in saved.cells) == sorted(sources)
    nbformat.validate(saved)
    assert "Out-of-band" not in collab_server.log.read_text()
