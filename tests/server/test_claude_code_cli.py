"""The real Claude Code CLI (pinned in tests/server/npm) works in a notebook through the
endpoint, as a user would connect it (``--mcp-config`` with the server's URL and token), its
model a scripted local Messages server (tests/engines/scripted_claude.py): it inserts a cell
and runs it; the saved notebook holds the cell, its output and Claude Code's name as the cell's
provenance, and the notebook folder's event log has both calls.

Claude Code 2.1.44 offline, as root: ``IS_SANDBOX=1``, ``--allowedTools`` naming the MCP tools
(``mcp__<server>__<tool>``) instead of ``--dangerously-skip-permissions``; the rest of its
environment is tests/engines/conftest.py's ``agent_env``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ..engines.conftest import agent_env
from ..engines.scripted_claude import ScriptedClaude, text, tool_use
from .jupyter import RunningServer, saved_notebook, write_notebook

NPM_DIR = Path(__file__).with_name("npm")
pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]


def claude_bin() -> Path:
    path = NPM_DIR / "node_modules" / ".bin" / "claude"
    if path.exists():
        return path
    message = f"the Claude Code CLI is not installed: run `npm ci` in {NPM_DIR}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


def run_claude(server: RunningServer, model: ScriptedClaude, prompt: str, tools: list[str],
               tmp_path: Path) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"jupyter": {
        "type": "http", "url": server.endpoint, "headers": {"Authorization": f"token {server.token}"}}}}))
    command = [str(claude_bin()), "-p", prompt, "--mcp-config", str(config), "--strict-mcp-config",
               "--allowedTools", ",".join(tools), "--output-format", "json"]
    env = {**os.environ, **agent_env(model.url, home)}
    return subprocess.run(command, capture_output=True, text=True, timeout=240, env=env, cwd=server.root)


def test_claude_code_inserts_and_runs_a_cell_through_the_gate(auto_server: RunningServer, tmp_path: Path) -> None:
    from jupyter_brain.agent.events import EventLog

    claude_bin()
    write_notebook(auto_server.root / "cc.ipynb", ["base = 20"])
    source = "answer = 6 * 7\nprint('the answer is', answer)"
    model = ScriptedClaude().push(
        [text("Adding the cell."), tool_use("mcp__jupyter__insert_cell", {"path": "cc.ipynb", "source": source}, "toolu_1")],
        [tool_use("mcp__jupyter__execute_cell", {"path": "cc.ipynb", "index": -1}, "toolu_2")],
        [text("The cell printed: the answer is 42.")],
    )
    try:
        done = run_claude(auto_server, model, "Add a cell that computes 6 * 7 and run it.",
                          ["mcp__jupyter__insert_cell", "mcp__jupyter__execute_cell"], tmp_path)
    finally:
        model.stop()
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    assert "the answer is 42" in json.loads(done.stdout)["result"]

    offered = {t["name"] for t in model.main_requests()[0]["body"]["tools"]}
    assert {"mcp__jupyter__insert_cell", "mcp__jupyter__execute_cell", "mcp__jupyter__read_notebook"} <= offered
    results = [b for r in model.main_requests()[1:] for m in r["body"]["messages"] if m["role"] == "user"
               for b in (m["content"] if isinstance(m["content"], list) else []) if b.get("type") == "tool_result"]
    assert any("the answer is 42" in json.dumps(b["content"]) for b in results)  # the run's output reached the model

    nb = saved_notebook(auto_server.root / "cc.ipynb", lambda nb: len(nb.cells) == 2 and nb.cells[1].outputs)
    cell = nb.cells[1]
    assert cell.source == source and cell.outputs[0]["text"] == "the answer is 42\n"
    provenance = cell.metadata["jupyter_brain"]["provenance"]
    assert provenance["client"] == "claude-code" and provenance["tool"] == "insert_cell"

    log = EventLog(auto_server.root / ".jupyter_brain" / "events.sqlite")
    try:
        records = [r for r in log.records("outside_call") if r["arguments"].get("path") == "cc.ipynb"]
    finally:
        log.close()
    assert [(r["tool"], r["client"], r["status"]) for r in records] == [
        ("insert_cell", "claude-code", "ok"), ("execute_cell", "claude-code", "ok")]
