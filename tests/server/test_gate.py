"""The gate: read-only refuses, ask without a browser refuses at once and says how to allow,
the execution limit holds; refusals are in the event log and nothing changed or ran."""

from __future__ import annotations

import nbformat
import pytest

from .jupyter import call_tools, start_server, write_notebook

pytestmark = pytest.mark.kernel


@pytest.mark.parametrize("permission", ["read-only", "ask"])
def test_edits_and_executions_are_refused_and_reading_still_works(tmp_path, permission: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root / "nb.ipynb", ["x = 1"])
    server = start_server(root, f"--JupyterBrainMCP.permission={permission}")
    try:
        replies = call_tools(server, [
            ("insert_cell", {"path": "nb.ipynb", "source": "y = 2"}),
            ("edit_cell", {"path": "nb.ipynb", "index": 0, "source": "x = 2"}),
            ("delete_cell", {"path": "nb.ipynb", "index": 0}),
            ("execute_cell", {"path": "nb.ipynb", "index": 0}),
            ("execute_code", {"path": "nb.ipynb", "code": "open('ran.txt', 'w').write('ran')"}),
            ("create_notebook", {"path": "new.ipynb"}),
            ("read_notebook", {"path": "nb.ipynb"}),
        ])
    finally:
        server.stop()
    *refused, read = replies
    assert all(r.is_error for r in refused)
    for reply in refused:
        assert "--JupyterBrainMCP.permission=auto" in reply.text
        assert ("'read-only'" in reply.text) if permission == "read-only" else ("approval" in reply.text)
    assert not read.is_error and "x = 1" in read.text
    nb = nbformat.read(root / "nb.ipynb", as_version=4)
    assert [c.source for c in nb.cells] == ["x = 1"] and not nb.cells[0].outputs
    assert not (root / "ran.txt").exists() and not (root / "new.ipynb").exists()

    from jupyter_brain.agent.events import EventLog

    log = EventLog(root / ".jupyter_brain" / "events.sqlite")
    try:
        decisions = [r["decision"]["how"] for r in log.records("outside_call")]
    finally:
        log.close()
    assert decisions == [f"refused: {permission}"] * 6 + ["read"]  # create_notebook too: its notebook is in the root


def test_executions_per_session_are_limited(tmp_path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root / "nb.ipynb", ["x = 1"])
    server = start_server(root, "--JupyterBrainMCP.permission=auto", "--JupyterBrainMCP.max_executions_per_session=2",
                          "--JupyterBrainMCP.max_call_seconds=1")
    try:
        first, second, third = call_tools(server, [
            ("execute_code", {"path": "nb.ipynb", "code": "print('one')"}),
            ("execute_code", {"path": "nb.ipynb", "code": "import time; time.sleep(20)", "timeout": 60}),
            ("execute_code", {"path": "nb.ipynb", "code": "print('three')"}),
        ])
        other_client = call_tools(server, [("execute_code", {"path": "nb.ipynb", "code": "print('four')"})],
                                  client_name="another-agent")[0]
    finally:
        server.stop()
    assert "one" in first.text
    assert ": timeout" in second.text  # max_call_seconds caps the 60 s the agent asked for
    assert third.is_error and "its 2 executions" in third.text and "max_executions_per_session" in third.text
    assert not other_client.is_error and "four" in other_client.text


def test_a_port_taken_before_the_server_binds_it_is_replaced(tmp_path, monkeypatch) -> None:
    """start_server picks a free port; another process may take it first (CI run R6)."""
    import socket

    from . import jupyter

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    ports = iter([taken.getsockname()[1]])
    real_free_port = jupyter.free_port
    monkeypatch.setattr(jupyter, "free_port", lambda: next(ports, None) or real_free_port())
    root = tmp_path / "root"
    root.mkdir()
    server = jupyter.start_server(root)
    try:
        assert f":{taken.getsockname()[1]}/" not in server.url
    finally:
        server.stop()
        taken.close()
