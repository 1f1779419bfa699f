"""How long the bounded waits of MCP servers and run_python take: the speed goals that the
tests used to assert with wall-clock limits (the tests now check only what happened).

* a hanging MCP tool (tool_timeout_s=1) through the executor: given up once, not retried
  (goal < 3 s; a retry would take 2 s);
* a server that never answers the MCP handshake (startup_timeout_s=1): given up and
  stopped (goal < 8 s);
* a call to a streamable HTTP server that was killed: fails (goal < 10 s);
* ``MCPManager.shutdown()`` with two demo servers and mcp-server-time: every process
  stopped (goal < 5 s; the servers stop side by side);
* ``run_python`` with timeout_s=0.5 on a busy loop: interrupted (goal < 5 s).

Uses the tests' demo server (tests/mcp_client/demo_server.py). Prints figures; asserts nothing.

    python benchmarks/mcp_bounds.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.mcp_client.servers import start_http_demo, stdio_entry, write_config


def hanging_tool(folder: Path) -> float:
    from jupyter_brain.agent.executor import BoundedToolExecutor, ToolTurnState
    from jupyter_brain.agent.tools import AgentToolRegistry
    from jupyter_brain.mcp.manager import MCPManager
    from jupyter_brain.providers.base import ToolCall

    manager = MCPManager(startup_timeout_s=15)
    try:
        specs = manager.tools(write_config(folder, {"demo": stdio_entry(tool_timeout_s=1)}), report=None)
        executor = BoundedToolExecutor(AgentToolRegistry(specs, permission_mode="auto"))
        started = time.perf_counter()
        [outcome] = executor.execute([ToolCall(id="1", name="demo__hang", arguments={})], ToolTurnState())
        elapsed = time.perf_counter() - started
        assert outcome.status == "timeout", outcome.output
        return elapsed
    finally:
        manager.shutdown()


def mute_handshake(folder: Path) -> float:
    from jupyter_brain.mcp.manager import MCPManager

    manager = MCPManager(startup_timeout_s=15)
    try:
        path = write_config(folder, {"mute": {"command": sys.executable, "args": ["-c", "import time; time.sleep(600)"],
                                              "startup_timeout_s": 1}})
        started = time.perf_counter()
        manager.tools(path, report=None)
        return time.perf_counter() - started
    finally:
        manager.shutdown()


def dead_http_server(folder: Path) -> float:
    from jupyter_brain.agent.tools import ToolError
    from jupyter_brain.mcp.manager import MCPManager

    url, process = start_http_demo()
    manager = MCPManager(startup_timeout_s=15)
    try:
        specs = manager.tools(write_config(folder, {"web": {"type": "http", "url": url}}), report=None)
        lookup = next(s for s in specs if s.name == "web__lookup")
        process.kill()
        process.wait(30)
        started = time.perf_counter()
        try:
            lookup(key="apple")
        except ToolError:
            pass
        return time.perf_counter() - started
    finally:
        manager.shutdown()
        process.kill()
        process.wait(30)


def shutdown(folder: Path) -> float:
    from jupyter_brain.mcp.manager import MCPManager

    manager = MCPManager(startup_timeout_s=15)
    path = write_config(folder, {"a": stdio_entry(), "b": stdio_entry(),
                                 "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}})
    specs = {s.name: s for s in manager.tools(path, report=None)}
    specs["a__pid"](), specs["b__pid"]()
    started = time.perf_counter()
    manager.shutdown()
    return time.perf_counter() - started


def runaway_python(folder: Path) -> float:
    from jupyter_brain.agent.tools import ToolError
    from jupyter_brain.tools import python_tools

    [run] = python_tools({}, timeout_s=0.5)
    started = time.perf_counter()
    try:
        run("while True:\n    pass")
    except ToolError:
        pass
    return time.perf_counter() - started


CASES: list[tuple[str, Callable[[Path], float], float]] = [
    ("hanging MCP tool, 1 s timeout", hanging_tool, 3.0),
    ("mute server, 1 s handshake", mute_handshake, 8.0),
    ("call to a killed HTTP server", dead_http_server, 10.0),
    ("shutdown of 3 servers", shutdown, 5.0),
    ("run_python busy loop, 0.5 s", runaway_python, 5.0),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"bounded waits, {args.runs} runs each (seconds)")
    print(f"{'case':<34}{'median':>8}{'max':>8}{'goal':>8}")
    for label, case, goal in CASES:
        figures = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="jb-mcp-bounds-") as tmp:
                figures.append(case(Path(tmp)))
        median, worst = statistics.median(figures), max(figures)
        flag = "" if worst < goal else "   over the goal"
        print(f"{label:<34}{median:>8.2f}{worst:>8.2f}{'< ' + format(goal, 'g'):>8}{flag}")


if __name__ == "__main__":
    main()
