"""The MCP endpoint on a real Jupyter server, driven by the MCP SDK's client over HTTP."""

from __future__ import annotations

import base64
import io
import json
import os

import httpx
import nbformat
import pytest

from .jupyter import RunningServer, call_tools, list_tool_names, saved_notebook, write_notebook

pytestmark = pytest.mark.kernel

TOOLS = ["list_notebooks", "read_notebook", "read_cell", "insert_cell", "edit_cell", "delete_cell", "execute_cell",
         "execute_code", "list_variables", "inspect_variable", "create_notebook"]


def test_a_request_without_the_token_is_refused(auto_server: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    assert httpx.post(auto_server.endpoint, json=body, headers=accept).status_code in (401, 403)
    wrong = {**accept, "Authorization": "token not-the-token"}
    assert httpx.post(auto_server.endpoint, json=body, headers=wrong).status_code in (401, 403)
    right = {**accept, "Authorization": f"token {auto_server.token}"}
    assert httpx.post(auto_server.endpoint, json=body, headers=right).status_code == 200


def test_the_tools_are_listed_by_their_jupyter_mcp_server_names(auto_server: RunningServer) -> None:
    assert list_tool_names(auto_server) == TOOLS


def test_an_inserted_cell_runs_in_the_notebooks_kernel_and_is_saved_with_provenance(auto_server: RunningServer) -> None:
    write_notebook(auto_server.root / "work.ipynb", [("markdown", "# Work"), "base = 20"])
    inserted, first, second, listing, read = call_tools(auto_server, [
        ("insert_cell", {"path": "work.ipynb", "source": "answer = base * 2 + 2\nprint('answer', answer)"}),
        ("execute_cell", {"path": "work.ipynb", "index": 1}),
        ("execute_cell", {"path": "work.ipynb", "index": -1}),
        ("list_notebooks", {}),
        ("read_notebook", {"path": "work.ipynb"}),
    ], client_name="claude-code")
    assert not inserted.is_error and "index 2" in inserted.text
    assert not first.is_error and ": ok" in first.text
    assert "answer 42" in second.text
    assert "work.ipynb  (kernel running)" in listing.text
    nb = saved_notebook(auto_server.root / "work.ipynb", lambda nb: len(nb.cells) == 3 and nb.cells[2].outputs)
    assert f"[0 {nb.cells[0].id} markdown]\n# Work" in read.text and f"[1 {nb.cells[1].id}]\nbase = 20" in read.text
    assert f"[2 {nb.cells[2].id}] (by claude-code)" in read.text and "answer 42" in read.text
    nbformat.validate(nb)
    cell = nb.cells[2]
    assert cell.outputs[0]["text"] == "answer 42\n" and cell.execution_count == 2
    provenance = cell.metadata["jupyter_brain"]["provenance"]
    assert provenance["client"] == "claude-code" and provenance["tool"] == "insert_cell"
    assert len(provenance["session"]) >= 16 and provenance["time"]
    assert "jupyter_brain" not in nb.cells[1].metadata  # the user's cell: run, not written by the agent


def test_edit_and_delete_by_cell_id(auto_server: RunningServer) -> None:
    write_notebook(auto_server.root / "ids.ipynb", ["a = 1", "b = 2", "c = 3"])
    nb = nbformat.read(auto_server.root / "ids.ipynb", as_version=4)
    middle, last = nb.cells[1].id, nb.cells[2].id
    edited, deleted = call_tools(auto_server, [
        ("edit_cell", {"path": "ids.ipynb", "cell_id": middle, "source": "b = 22"}),
        ("delete_cell", {"path": "ids.ipynb", "cell_id": last}),
    ])
    assert "-b = 2" in edited.text and "+b = 22" in edited.text
    assert "notebook has 2 cells" in deleted.text
    nb = saved_notebook(auto_server.root / "ids.ipynb", lambda nb: len(nb.cells) == 2)
    assert [c.source for c in nb.cells] == ["a = 1", "b = 22"]
    assert nb.cells[1].metadata["jupyter_brain"]["provenance"]["tool"] == "edit_cell"


def test_bad_input_gets_an_error_naming_the_problem(auto_server: RunningServer, tmp_path) -> None:
    write_notebook(auto_server.root / "small.ipynb", ["x = 1"])
    outside = tmp_path / "outside"
    outside.mkdir()
    write_notebook(outside / "secret.ipynb", ["s = 1"])
    os.symlink(outside, auto_server.root / "link")
    replies = call_tools(auto_server, [
        ("read_notebook", {"path": "../small.ipynb"}),
        ("read_notebook", {"path": str(auto_server.root / "small.ipynb")}),
        ("read_notebook", {"path": "link/secret.ipynb"}),
        ("read_cell", {"path": "small.ipynb", "index": 5}),
        ("insert_cell", {"path": "small.ipynb", "index": 7, "source": "y"}),
        ("read_notebook", {"path": "missing.ipynb"}),
        ("read_cell", {"path": "small.ipynb", "cell_id": "nope"}),
        ("edit_cell", {"path": "small.ipynb", "index": 0}),
        ("execute_cell", {"path": "small.ipynb", "index": 0, "timeout": -1}),
        ("no_such_tool", {}),
        ("read_notebook", {"path": "small.txt"}),
    ])
    assert all(r.is_error for r in replies), [r.text for r in replies]
    texts = [r.text for r in replies]
    assert "'..'" in texts[0]
    assert "absolute" in texts[1]
    assert "symlink" in texts[2]
    assert "index 5 is out of range" in texts[3] and "1 cells" in texts[3]
    assert "index 7 is out of range" in texts[4]
    assert "No notebook 'missing.ipynb'" in texts[5]
    assert "No cell with id 'nope'" in texts[6]
    assert "Bad arguments for edit_cell" in texts[7] and "source" in texts[7]
    assert "timeout" in texts[8]
    assert "No tool 'no_such_tool'" in texts[9]
    assert "not a notebook" in texts[10]
    assert "Traceback" not in "".join(texts)
    assert nbformat.read(auto_server.root / "small.ipynb", as_version=4).cells[0].source == "x = 1"  # nothing changed


def test_a_crash_a_timeout_and_a_dying_kernel_each_get_a_clear_answer(auto_server: RunningServer) -> None:
    write_notebook(auto_server.root / "faults.ipynb", ["1/0"])
    crash, slow, died, after = call_tools(auto_server, [
        ("execute_cell", {"path": "faults.ipynb", "index": 0}),
        ("execute_code", {"path": "faults.ipynb", "code": "import time\ntime.sleep(30)", "timeout": 1}),
        ("execute_code", {"path": "faults.ipynb", "code": "import os\nos._exit(1)"}),
        ("execute_code", {"path": "faults.ipynb", "code": "print('back', 6 * 7)"}),
    ])
    assert ": error" in crash.text and "ZeroDivisionError: division by zero" in crash.text
    saved = saved_notebook(auto_server.root / "faults.ipynb", lambda nb: nb.cells[0].outputs).cells[0]
    assert saved.outputs[0]["output_type"] == "error" and saved.outputs[0]["ename"] == "ZeroDivisionError"
    assert ": timeout" in slow.text and "kernel was interrupted" in slow.text and "KeyboardInterrupt" in slow.text
    assert ": died" in died.text and "next call runs in the fresh kernel" in died.text
    assert not after.is_error and "back 42" in after.text


def test_variables_come_from_the_kernel_with_keys_masked(auto_server: RunningServer) -> None:
    write_notebook(auto_server.root / "vars.ipynb", [])
    key = "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0k1L2"
    run, listed, inspected, missing = call_tools(auto_server, [
        ("execute_code", {"path": "vars.ipynb", "code": f"rows = list(range(12))\nconfig = {{'api_key': '{key}'}}"}),
        ("list_variables", {"path": "vars.ipynb"}),
        ("inspect_variable", {"path": "vars.ipynb", "name": "config['api_key']"}),
        ("inspect_variable", {"path": "vars.ipynb", "name": "nothing_here"}),
    ])
    assert not run.is_error
    assert "rows" in listed.text and "len 12" in listed.text
    assert key not in listed.text + inspected.text and "[REDACTED]" in inspected.text
    assert "nothing_here" in missing.text


def test_figures_come_back_as_bounded_images_and_long_outputs_are_cut(auto_server: RunningServer) -> None:
    png = _png(1600, 900)
    write_notebook(auto_server.root / "figs.ipynb", ["plot()", "print(long)"], outputs={
        0: [nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure size 1600x900>"})],
        1: [nbformat.v4.new_output("stream", name="stdout", text="line\n" * 5000)],
    })
    read, cell = call_tools(auto_server, [
        ("read_notebook", {"path": "figs.ipynb"}),
        ("read_cell", {"path": "figs.ipynb", "index": 1, "max_chars": 1000}),
    ])
    assert len(read.images) == 1 and read.images[0].mime_type == "image/png"
    assert "[figure 1 attached as an image]" in read.text
    assert "characters" in read.text and "left out" in read.text and len(read.text) < 2000
    assert len(cell.text) < 2000 and "left out" in cell.text
    try:
        from PIL import Image
    except ImportError:
        return
    size = Image.open(io.BytesIO(base64.b64decode(read.images[0].data))).size
    assert max(size) <= 320  # read_notebook: overview_image_px


def test_each_outside_call_is_in_the_notebook_folders_event_log(auto_server: RunningServer) -> None:
    from jupyter_brain.agent.events import EventLog

    (auto_server.root / "sub").mkdir()
    write_notebook(auto_server.root / "sub" / "logged.ipynb", ["z = 3"])
    call_tools(auto_server, [("read_notebook", {"path": "sub/logged.ipynb"}),
                             ("edit_cell", {"path": "sub/logged.ipynb", "index": 0, "source": "z = 4"})],
               client_name="codex")
    log = EventLog(auto_server.root / "sub" / ".jupyter_brain" / "events.sqlite")
    try:
        records = log.records("outside_call")
    finally:
        log.close()
    assert [r["tool"] for r in records] == ["read_notebook", "edit_cell"]
    edit = records[1]
    assert edit["client"] == "codex" and edit["decision"] == {"allowed": True, "how": "auto"}
    assert edit["arguments"]["source"] == "z = 4" and edit["status"] == "ok" and "Edited cell 0" in edit["summary"]
    assert json.dumps(records)  # plain data


def test_create_notebook_then_work_in_it(auto_server: RunningServer) -> None:
    created, again, inserted = call_tools(auto_server, [
        ("create_notebook", {"path": "fresh.ipynb"}),
        ("create_notebook", {"path": "fresh.ipynb"}),
        ("insert_cell", {"path": "fresh.ipynb", "source": "# notes", "cell_type": "markdown"}),
    ])
    assert "Created fresh.ipynb" in created.text
    assert again.is_error and "exists already" in again.text
    nb = saved_notebook(auto_server.root / "fresh.ipynb", lambda nb: nb.cells)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name and nb.cells[0].cell_type == "markdown"


def test_a_notebook_an_agent_built_reruns_with_run_all_and_no_agent(auto_server: RunningServer) -> None:
    """#35: what an outside agent wrote is plain cells (provenance in metadata only): a fresh
    kernel with no server, no endpoint and no jupyter-brain loaded runs it top to bottom, as Run All
    does, to the outputs the agent's own runs left."""
    from nbclient import NotebookClient

    replies = call_tools(auto_server, [
        ("create_notebook", {"path": "built.ipynb"}),
        ("insert_cell", {"path": "built.ipynb", "source": "# Squares", "cell_type": "markdown"}),
        ("insert_cell", {"path": "built.ipynb", "source": "squares = [n * n for n in range(5)]"}),
        ("insert_cell", {"path": "built.ipynb", "source": "print(sum(squares))"}),
        ("execute_cell", {"path": "built.ipynb", "index": 1}),
        ("execute_cell", {"path": "built.ipynb", "index": 2}),
    ], client_name="claude-code")
    assert not any(r.is_error for r in replies), [r.text for r in replies]
    built = saved_notebook(auto_server.root / "built.ipynb", lambda nb: len(nb.cells) == 3 and nb.cells[2].outputs)
    assert all(c.metadata["jupyter_brain"]["provenance"]["client"] == "claude-code" for c in built.cells)
    assert built.cells[2].outputs[0]["text"] == "30\n"

    rerun = nbformat.from_dict(json.loads(json.dumps(built)))
    for cell in rerun.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    NotebookClient(rerun, kernel_name="python3", timeout=60,
                   resources={"metadata": {"path": str(auto_server.root)}}).execute()
    assert rerun.cells[2].outputs[0]["text"] == "30\n"
    nbformat.validate(rerun)


def _png(width: int, height: int) -> str:
    try:
        from PIL import Image
    except ImportError:  # a tiny valid PNG: the downscale is then not checked
        return ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 80, 40)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")
