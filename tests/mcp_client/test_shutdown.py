"""No server process outlives its kernel: at shutdown, at interpreter exit, after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from .servers import alive, children_running, exit_code, gone, stdio_entry, write_config

pytestmark = pytest.mark.mcp_server


def test_shutdown_stops_every_server(manager, tmp_path):
    path = write_config(tmp_path, {"a": stdio_entry(), "b": stdio_entry(),
                                   "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}})
    tools = {s.name: s for s in manager.tools(path, report=None)}
    [time_server] = children_running("mcp_server_time")
    pids = [int(tools["a__pid"]()), int(tools["b__pid"]()), time_server]
    assert all(alive(p) for p in pids)
    manager.shutdown()  # how long it takes: benchmarks/mcp_bounds.py
    assert not any(alive(p) for p in pids)  # stopped before shutdown returned, not merely later
    assert not manager.loop.running
    assert manager.tools(path, report=None) == []  # a closed manager starts nothing


CHILD = textwrap.dedent("""
    import sys
    from jupyter_brain.mcp import mcp_tools
    tools = {s.name: s for s in mcp_tools(sys.argv[1], report=print)}
    print(tools["demo__pid"](), flush=True)
    if sys.argv[2] == "hang":
        import threading
        threading.Event().wait(60)  # not time.sleep: it fails under faketime (see servers.pause)
""")


def _child(tmp_path, mode):
    write_config(tmp_path, {"demo": stdio_entry(startup_timeout_s=120)})  # the kernel's manager: 60 s otherwise
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), mode], stdout=subprocess.PIPE, text=True)
    pid = int(proc.stdout.readline())
    assert alive(pid)
    return proc, pid


def test_interpreter_exit_stops_the_servers(tmp_path):
    """The kernel's manager registers its shutdown with atexit (a kernel shutdown or restart)."""
    proc, pid = _child(tmp_path, "exit")
    assert exit_code(proc, 120) == 0
    assert not alive(pid)  # stopped before the interpreter returned, not merely later


def test_a_killed_kernel_leaves_no_server_behind(tmp_path):
    """No atexit after SIGKILL: the server sees its stdin close and exits on its own."""
    proc, pid = _child(tmp_path, "hang")
    os.kill(proc.pid, signal.SIGKILL)
    assert exit_code(proc) == -signal.SIGKILL
    assert gone(pid)


def test_the_config_file_going_away_stops_the_servers(tmp_path, shutdown_kernel_mcp):
    from jupyter_brain.mcp import mcp_tools

    path = write_config(tmp_path, {"demo": stdio_entry(startup_timeout_s=120)})
    pid = int({s.name: s for s in mcp_tools(tmp_path, report=None)}["demo__pid"]())
    path.unlink()
    assert mcp_tools(tmp_path, report=None) == []
    assert not alive(pid)
    assert json.dumps(mcp_tools(tmp_path / "elsewhere", report=None)) == "[]"
