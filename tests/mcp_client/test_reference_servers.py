"""The reference servers users run, as the agent's tools: ``server-filesystem`` (its allowed
directory is the workspace, from the roots this client gives), ``server-memory`` (npm, pinned
in tests/mcp_client/npm) and ``mcp-server-git`` (PyPI, pinned in the test extra); and one of
them through a full turn with a scripted model."""

from __future__ import annotations

import subprocess
import sys

import pytest

from jupyter_brain.agent.events import EventLog, ToolCallEnd
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, ToolError
from jupyter_brain.providers.scripted import ScriptedProvider

from .servers import npm_entry, wait_until, write_config

pytestmark = pytest.mark.mcp_server


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """(manager, tools by name, workspace, repository) with the three servers started."""
    from jupyter_brain.mcp.manager import MCPManager

    folder = tmp_path_factory.mktemp("reference")
    workspace, repo, outside = folder / "workspace", folder / "repo", folder / "outside"
    for path in (workspace, repo, outside):
        path.mkdir()
    (workspace / "notes.txt").write_text("inside the workspace\n")
    (outside / "secret.txt").write_text("outside\n")
    git = ["git", "-C", str(repo), "-c", "user.name=Test", "-c", "user.email=test@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "README.md").write_text("# repo\n")
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first commit"], check=True)
    (repo / "README.md").write_text("# repo, changed\n")
    path = write_config(folder / "data", {
        # no directory argument: the allowed directory is the client's root, the workspace
        "fs": npm_entry("mcp-server-filesystem"),
        "mem": npm_entry("mcp-server-memory", env={"MEMORY_FILE_PATH": str(folder / "memory.jsonl")}),
        "git": {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(repo)]},
    })
    manager = MCPManager(startup_timeout_s=120)
    manager.set_roots([workspace])
    tools = {s.name: s for s in manager.tools(path, report=None)}
    yield manager, tools, workspace, repo, outside
    manager.shutdown()


def test_filesystem_works_inside_the_workspace_and_refuses_outside(reference):
    manager, tools, workspace, _, outside = reference
    assert {name: c.state for name, c in manager.connections.items()} == {"fs": "running", "mem": "running",
                                                                         "git": "running"}
    # the server takes its allowed directories from the roots once it has asked for them
    assert wait_until(lambda: str(workspace.resolve()) in tools["fs__list_allowed_directories"]())
    assert tools["fs__read_text_file"](path=str(workspace / "notes.txt")) == "inside the workspace\n"
    tools["fs__write_file"](path=str(workspace / "new.txt"), content="written by the agent")
    assert (workspace / "new.txt").read_text() == "written by the agent"
    with pytest.raises(ToolError, match="Access denied - path outside allowed directories") as caught:
        tools["fs__read_text_file"](path=str(outside / "secret.txt"))
    assert "\n" not in str(caught.value)


def test_memory_creates_and_reads_entities(reference):
    _, tools, *_ = reference
    tools["mem__create_entities"](entities=[{"name": "Ada", "entityType": "person",
                                             "observations": ["wrote the first program"]}])
    found = tools["mem__open_nodes"](names=["Ada"])
    assert '"name": "Ada"' in found and "wrote the first program" in found


def test_git_status_and_log_on_a_repository(reference):
    _, tools, _, repo, _ = reference
    status = tools["git__git_status"](repo_path=str(repo))
    assert "README.md" in status and "modified" in status
    log = tools["git__git_log"](repo_path=str(repo))
    assert "first commit" in log


def test_a_turn_uses_a_reference_servers_tool(reference):
    manager, tools, *_ = reference
    bot = ScriptedProvider([
        {"text": "Reading.", "tool_calls": [{"name": "mem__open_nodes", "arguments": {"names": ["Grace"]}}]},
        "Grace: COBOL.",
    ])
    tools["mem__create_entities"](entities=[{"name": "Grace", "entityType": "person", "observations": ["COBOL"]}])
    harness = AgentHarness(bot, AgentToolRegistry(list(tools.values()), permission_mode="auto"), EventLog())
    result = harness.run_turn("s", [], "What do you know about Grace?")
    assert result.text == "Grace: COBOL."
    [call] = result.tool_calls
    assert call.status == "ok" and "COBOL" in call.output
    ends = [e for e in harness.event_log.events(turn_id=result.turn_id) if isinstance(e, ToolCallEnd)]
    assert [e.status for e in ends] == ["ok"]
