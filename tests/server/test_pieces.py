"""The endpoint's pieces without a server: paths, cell positions, rendering, the gate, the
variable code, and how ``%agent log`` shows an outside agent's call."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import nbformat
import pytest

from jupyter_brain.server.audit import AuditTrail
from jupyter_brain.server.errors import ToolProblem
from jupyter_brain.server.gate import Gate, OutsideSession, Refused, stamp
from jupyter_brain.server.notebooks import NotebookStore, cell_position
from jupyter_brain.server.rendering import Renderer, RenderLimits, cut
from jupyter_brain.server.variables_code import variables_code


def test_paths_stay_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    os.symlink(tmp_path / "out", root / "escape")
    store = NotebookStore(contents_manager=None, root_dir=root)
    assert store.api_path("sub/a.ipynb") == "sub/a.ipynb"
    for bad, words in [("../a.ipynb", "'..'"), ("/etc/a.ipynb", "absolute"), ("C:/a.ipynb", "absolute"),
                       ("escape/a.ipynb", "symlink"), ("", "empty"), ("sub/a.txt", "not a notebook")]:
        with pytest.raises(ToolProblem, match=words):
            store.api_path(bad)


def test_cell_positions() -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(str(i)) for i in range(3)]
    assert cell_position(nb, -1, None) == 2 and cell_position(nb, 0, None) == 0
    assert cell_position(nb, None, nb.cells[1].id) == 1
    assert cell_position(nb, -1, None, inserting=True) == 3 and cell_position(nb, 3, None, inserting=True) == 3
    assert cell_position(nb, None, nb.cells[1].id, inserting=True) == 2  # after that cell
    with pytest.raises(ToolProblem, match=r"index 3 is out of range: this notebook has 3 cells \(0 to 2, or -1\)"):
        cell_position(nb, 3, None)
    with pytest.raises(ToolProblem, match="insert at 0 to 3"):
        cell_position(nb, 9, None, inserting=True)
    with pytest.raises(ToolProblem, match="give index"):
        cell_position(nb, None, None)


def test_outputs_are_lean_text_and_bounded() -> None:
    r = Renderer(RenderLimits(max_output_chars=200, max_images=1))
    cell = nbformat.v4.new_code_cell("df")
    html = "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
    cell.outputs = [
        nbformat.v4.new_output("execute_result", data={"text/html": html, "text/plain": "   a  b\n0  1  2"}),
        nbformat.v4.new_output("display_data", data={"text/html": html}),
        nbformat.v4.new_output("stream", name="stdout", text="x" * 1000),
        nbformat.v4.new_output("error", ename="ValueError", evalue="bad", traceback=["\x1b[31mTrace\x1b[0m", "ValueError: bad"]),
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="}),
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="}),
    ]
    text = r.cell(4, cell)
    assert "→    a  b\n0  1  2" in text  # the plain-text form, not the HTML
    assert "a | b |" in text  # HTML with no text form, as text
    assert "left out" in text and text.count("x") < 300
    assert "error ValueError: bad" in text and "\x1b" not in text
    assert "[figure 1 attached as an image]" in text and "images are used" in text
    assert len(r.images) == 1


def test_a_result_over_its_byte_budget_is_cut_with_a_note() -> None:
    r = Renderer(RenderLimits(max_result_bytes=1000))
    result = r.result("y" * 5000)
    assert len(result.text.encode()) <= 1000 and "more bytes" in result.text
    assert cut("short", 10) == "short"


def test_the_gate() -> None:
    session = OutsideSession("s1", "codex")
    assert Gate("read-only", 0).check(session, "read_notebook", "read").allowed
    with pytest.raises(Refused, match="'read-only'") as refused:
        Gate("read-only", 0).check(session, "edit_cell", "write")
    assert refused.value.decision.how == "refused: read-only"
    with pytest.raises(Refused, match="permission=auto"):
        Gate("ask", 0).check(session, "execute_cell", "execute")
    gate = Gate("auto", 1)
    assert gate.check(session, "execute_cell", "execute").how == "auto"
    with pytest.raises(Refused, match="its 1 executions"):
        gate.check(session, "execute_code", "execute")
    assert gate.check(session, "insert_cell", "write").allowed  # the limit is on executions only
    cell = nbformat.v4.new_code_cell("x")
    stamp(cell, session, "insert_cell")
    assert cell.metadata["jupyter_brain"]["provenance"]["client"] == "codex"


def test_variable_arguments_go_in_as_data_never_as_code() -> None:
    name = "x'); import os; os.system('boom"
    code = variables_code("inspect_variable", {"name": name})
    compiled = compile(code, "<variables>", "exec")
    assert "system" not in compiled.co_names  # the name is a string constant inside a JSON literal
    assert json.dumps(json.dumps({"name": name})) in code


def test_agent_log_lists_an_outside_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from jupyter_brain.agent.events import EventLog
    from jupyter_brain.notebook.subcommands.past_turns import OUTSIDE_CALL, outside_line

    trail = AuditTrail()
    session = OutsideSession("0123456789abcdef", "claude-code")
    trail.record(tmp_path, session, "insert_cell", {"path": "a.ipynb", "index": 2, "source": "key = 'sk-ant-abcdefghijklmnop'"},
                 {"allowed": True, "how": "auto"}, "ok", "Inserted a code cell at index 2 (id x)", 0.01)
    trail.close()
    log = EventLog(tmp_path / ".jupyter_brain" / "events.sqlite")
    try:
        [record] = log.records(OUTSIDE_CALL)
    finally:
        log.close()
    assert "sk-ant-abcdefghijklmnop" not in json.dumps(record)
    line = outside_line(record)
    assert "claude-code (012345) insert_cell a.ipynb #2  auto  ok: Inserted a code cell at index 2" in line


def test_a_notebook_is_saved_only_when_valid(tmp_path: Path) -> None:
    class Contents:
        saved = 0

        def file_exists(self, path: str) -> bool:
            return True

        def get(self, path: str, content: bool, type: str) -> dict:
            return {"content": nbformat.v4.new_notebook()}

        def save(self, model: dict, path: str) -> None:
            Contents.saved += 1

    store = NotebookStore(Contents(), tmp_path)
    assert not store.deferred  # a sync contents manager is saved at once
    broken = nbformat.from_dict({"cell_type": "code", "id": "c1", "metadata": {}})  # no source

    with pytest.raises(ToolProblem, match="invalid, so it was not made"):
        asyncio.run(store.edit("x.ipynb", lambda nb: nb.cells.append(broken), [broken]))
    assert Contents.saved == 0
    asyncio.run(store.edit("x.ipynb", lambda nb: nb.cells.append(nbformat.v4.new_code_cell("1"))))
    assert Contents.saved == 1
