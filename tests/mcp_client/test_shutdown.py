"""No server process outlives its kernel: at shutdown, at interpreter exit, after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from .servers import alive, stdio_entry, write_config

pytestmark = pytest.mark.mcp_server


def _gone(pid: int, within_s: float = 8.0) -> bool:
    deadline = time.monotonic() + within_s
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_shutdown_stops_every_server(manager, tmp_path):
    path = write_config(tmp_path, {"a": stdio_entry(), "b": stdio_entry(),
                                   "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}})
    tools = {s.name: s for s in manager.tools(path, report=None)}
    pids = [int(tools["a__pid"]()), int(tools["b__pid"]())]
    assert all(alive(p) for p in pids)
    started = time.monotonic()
    manager.shutdown()
    assert time.monotonic() - started < 5
    assert not any(alive(p) for p in pids)
    assert not manager.loop.running
    assert manager.tools(path, report=None) == []  # a closed manager starts nothing


CHILD = textwrap.dedent("""
    import sys
    from jupyter_brain.mcp import mcp_tools
    tools = {s.name: s for s in mcp_tools(sys.argv[1], report=print)}
    print(tools["demo__pid"](), flush=True)
    if sys.argv[2] == "hang":
        import time
        time.sleep(60)
""")


def _child(tmp_path, mode):
    write_config(tmp_path, {"demo": stdio_entry()})
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), mode], stdout=subprocess.PIPE, text=True)
    pid = int(proc.stdout.readline())
    assert alive(pid)
    return proc, pid


def test_interpreter_exit_stops_the_servers(tmp_path):
    """The kernel's manager registers its shutdown with atexit (a kernel shutdown or restart)."""
    proc, pid = _child(tmp_path, "exit")
    assert proc.wait(20) == 0
    assert not alive(pid)  # stopped before the interpreter returned, not merely later


def test_a_killed_kernel_leaves_no_server_behind(tmp_path):
    """No atexit after SIGKILL: the server sees its stdin close and exits on its own."""
    proc, pid = _child(tmp_path, "hang")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(5)
    assert _gone(pid)


def test_the_config_file_going_away_stops_the_servers(tmp_path, shutdown_kernel_mcp):
    from jupyter_brain.mcp import mcp_tools

    path = write_config(tmp_path, {"demo": stdio_entry()})
    pid = int({s.name: s for s in mcp_tools(tmp_path, report=None)}["demo__pid"]())
    path.unlink()
    assert mcp_tools(tmp_path, report=None) == []
    assert not alive(pid)
    assert json.dumps(mcp_tools(tmp_path / "elsewhere", report=None)) == "[]"
