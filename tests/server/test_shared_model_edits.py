"""``live_document.edit_document``: a tool's edit (a function of a notebook) applied to a shared
``YNotebook`` touches only what it changed, so a concurrent edit of another client (merged
through Yjs updates, as a tab's typing is) survives, and a cell that only got outputs keeps
its shared text. No server: two in-memory documents exchanging updates."""

from __future__ import annotations

from typing import Any

import nbformat
import pytest

from jupyter_brain.server.errors import ToolProblem
from jupyter_brain.server.live_document import _notebook_of, edit_document
from jupyter_brain.server.notebooks import cell_position

pytest.importorskip("jupyter_ydoc", reason="jupyter-collaboration is not installed (the collaboration extra)")


def _pair() -> tuple[Any, Any]:
    from jupyter_ydoc import YNotebook

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_markdown_cell("# Title"),
                nbformat.v4.new_code_cell("print(a)")]
    server, tab = YNotebook(), YNotebook()
    server.set(nb)
    tab.ydoc.apply_update(server.ydoc.get_update())
    return server, tab


def _sources(document: Any) -> list[str]:
    return [document.get_cell(i)["source"] for i in range(document.cell_number)]


def test_an_insert_and_outputs_keep_a_concurrent_edit_of_another_cell() -> None:
    server, tab = _pair()
    before_tab = tab.ydoc.get_state()
    typing = tab.ycells[0]["source"]
    typing += "  # typed"  # the user's typing, not yet at the server
    typed = tab.ydoc.get_update(before_tab)
    before_server = server.ydoc.get_state()
    new = nbformat.v4.new_code_cell("y = 42")

    def insert(nb: Any) -> int:
        nb.cells.insert(cell_position(nb, -1, None, inserting=True), new)
        return len(nb.cells)

    assert edit_document("n.ipynb", server, insert, [new]) == 4
    ran_id = server.ycells[2]["id"]
    text = server.ycells[2]["source"]

    def outputs(nb: Any) -> None:
        cell = next(c for c in nb.cells if c["id"] == ran_id)
        cell["outputs"] = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
        cell["execution_count"] = 3

    edit_document("n.ipynb", server, outputs)
    assert server.ycells[2]["source"] is not None and str(server.ycells[2]["source"]) == str(text)  # same text
    # both sides' changes meet, in either order
    server.ydoc.apply_update(typed)
    tab.ydoc.apply_update(server.ydoc.get_update(before_server))
    for document in (server, tab):
        assert _sources(document) == ["a = 1  # typed", "# Title", "print(a)", "y = 42"]
        cell = document.get_cell(2)
        assert cell["outputs"][0]["text"] == "1\n" and cell["execution_count"] == 3
    nbformat.validate(nbformat.from_dict(server.get()))


def test_edit_and_delete_by_id_and_a_failed_edit_changes_nothing() -> None:
    server, _ = _pair()
    first = server.ycells[0]["id"]

    def edit(nb: Any) -> None:
        cell = next(c for c in nb.cells if c["id"] == first)
        cell["source"] = "a = 2"
        cell["metadata"]["jupyter_brain"] = {"provenance": {"client": "agent"}}

    edit_document("n.ipynb", server, edit)
    edit_document("n.ipynb", server, lambda nb: nb.cells.pop(1))
    assert _sources(server) == ["a = 2", "print(a)"]
    assert server.get_cell(0)["metadata"]["jupyter_brain"]["provenance"]["client"] == "agent"

    def refused(nb: Any) -> None:
        nb.cells.pop(0)
        raise ToolProblem("no such cell")

    with pytest.raises(ToolProblem):
        edit_document("n.ipynb", server, refused)
    assert _sources(server) == ["a = 2", "print(a)"]
    assert [c["id"] for c in _notebook_of(server).cells] == [server.ycells[i]["id"] for i in range(2)]
