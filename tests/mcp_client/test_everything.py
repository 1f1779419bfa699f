"""``@modelcontextprotocol/server-everything`` (pinned in tests/mcp_client/npm) through the
manager, over stdio and over streamable HTTP: its tools, resources, prompts, progress, log
lines, roots and sampling (answered by a test's sampler: the server side is real)."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.events import EventLog, ServerLog, ToolProgress, UsageEvent
from jupyter_brain.agent.executor import BoundedToolExecutor, ToolTurnState
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tool_context import ToolContext, TurnEvents
from jupyter_brain.agent.tools import AgentToolRegistry, ToolError
from jupyter_brain.mcp.catalog import PromptArgument
from jupyter_brain.mcp.client_hooks import SamplingRefused, SamplingReply
from jupyter_brain.providers.base import ToolCall
from jupyter_brain.providers.scripted import ScriptedProvider

from .servers import exit_code, npm_entry, start_everything_http, wait_until, write_config

pytestmark = pytest.mark.mcp_server


@pytest.fixture(scope="module", params=["stdio", "http"])
def everything(request, tmp_path_factory):
    """(manager, config file, workspace) with server-everything as 'ev', started."""
    from jupyter_brain.mcp.manager import MCPManager

    folder = tmp_path_factory.mktemp(f"everything-{request.param}")
    workspace = folder / "workspace"
    workspace.mkdir()
    process = None
    if request.param == "stdio":
        entry = npm_entry("mcp-server-everything", "stdio")
    else:
        url, process = start_everything_http()
        entry = {"type": "http", "url": url}
    path = write_config(folder / "data", {"ev": entry})
    manager = MCPManager(startup_timeout_s=120)
    manager.set_roots([workspace])
    manager.tools(path, report=None)
    yield manager, path, workspace
    manager.shutdown()
    if process is not None:
        process.kill()
        exit_code(process)


def _tools(manager, path):
    return {s.name: s for s in manager.tools(path, report=None)}


def test_its_tools_are_offered_the_client_dependent_ones_included(everything):
    manager, path, _ = everything
    tools = _tools(manager, path)
    assert manager.connections["ev"].error is None
    # get-roots-list, trigger-sampling-request and the elicitation tools are registered only
    # for a client that declares roots, sampling and elicitation: we declare all three
    assert {"ev__echo", "ev__get-sum", "ev__trigger-long-running-operation", "ev__get-roots-list",
            "ev__trigger-sampling-request", "ev__get-resource-links", "ev__trigger-elicitation-request",
            "ev__trigger-url-elicitation"} <= set(tools)
    # a tool that runs only as an MCP task is offered too (mcp/tasks.py; test_tasks.py)
    assert "ev__simulate-research-query" in tools
    assert tools["ev__echo"](message="hello") == "Echo: hello"
    assert tools["ev__get-sum"](a=2, b=3) == "The sum of 2 and 3 is 5."


def test_resources_are_listed_and_read(everything):
    manager, path, _ = everything
    resources = manager.resources(path, report=None)
    static = [r for r in resources if not r.template]
    templates = [r for r in resources if r.template]
    doc = next(r for r in static if r.uri == "demo://resource/static/document/architecture.md")
    assert (doc.server, doc.name, doc.mime_type) == ("ev", "architecture.md", "text/markdown")
    assert "demo://resource/dynamic/text/{resourceId}" in {t.uri for t in templates}
    text = manager.read_resource("ev", doc.uri)
    assert text.startswith("[resource demo://resource/static/document/architecture.md]\n# Everything Server")
    # a template's instance reads too
    assert manager.read_resource("ev", "demo://resource/dynamic/text/7").startswith(
        "[resource demo://resource/dynamic/text/7]\nResource 7: This is a plaintext resource")
    with pytest.raises(ToolError, match=r"^MCP server 'ev' refused reading demo://nothing/here: ") as caught:
        manager.read_resource("ev", "demo://nothing/here")
    assert "\n" not in str(caught.value)
    with pytest.raises(ToolError, match=r"^no MCP server 'nope' \(servers: ev\)$"):
        manager.read_resource("nope", "demo://x")


def test_prompts_are_listed_and_filled_in_with_their_arguments(everything):
    manager, path, _ = everything
    prompts = {p.name: p for p in manager.prompts(path, report=None)}
    assert {"simple-prompt", "args-prompt"} <= set(prompts)
    assert prompts["args-prompt"].arguments == (PromptArgument("city", "Name of the city", True),
                                                PromptArgument("state", None, False))
    assert manager.get_prompt("ev", "simple-prompt", {}) == [("user", "This is a simple prompt without arguments.")]
    [(role, text)] = manager.get_prompt("ev", "args-prompt", {"city": "Paris", "state": "Texas"})
    assert role == "user" and "Paris" in text and "Texas" in text
    with pytest.raises(ToolError, match=r"^prompt 'ev:args-prompt' needs the argument city \(give name=value\)$"):
        manager.get_prompt("ev", "args-prompt", {})
    with pytest.raises(ToolError, match=r"^MCP server 'ev' has no prompt 'nope' \(its prompts: .*args-prompt"):
        manager.get_prompt("ev", "nope", {})


def test_resources_a_tool_returns_are_in_its_result(everything):
    manager, path, _ = everything
    tools = _tools(manager, path)
    links = tools["ev__get-resource-links"](count=2)
    assert "[resource link: Blob Resource 1 demo://resource/dynamic/blob/1 — Resource 1: plaintext resource]" in links
    assert "[resource link: Text Resource 2 demo://resource/dynamic/text/2" in links
    reference = tools["ev__get-resource-reference"](resourceType="Text", resourceId=3)
    assert "[resource demo://resource/dynamic/text/3]\nResource 3: This is a plaintext resource" in reference
    image = tools["ev__get-tiny-image"]()
    assert [im.media_type for im in image.images] == ["image/png"]


def test_progress_reaches_the_calls_context(everything):
    manager, path, _ = everything
    events = []
    context = ToolContext("call-1", step=2, emit=events.append)
    with context.active():
        out = manager.call("ev", "trigger-long-running-operation", {"duration": 0.3, "steps": 3}, 30)
    assert out == "Long running operation completed. Duration: 0.3 seconds, Steps: 3."
    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert [(e.call_id, e.step, e.progress, e.total) for e in progress] == [
        ("call-1", 2, 1.0, 3.0), ("call-1", 2, 2.0, 3.0), ("call-1", 2, 3.0, 3.0)]


def test_roots_are_the_workspace_and_a_change_reaches_the_server_with_its_log_line(everything, tmp_path):
    manager, path, workspace = everything
    tools = _tools(manager, path)
    assert f"URI: {workspace.resolve().as_uri()}" in tools["ev__get-roots-list"]()
    logs = []
    with TurnEvents.enter(logs.append):  # a running turn receives log lines sent between calls
        manager.set_roots([tmp_path])
        # the server asks for the roots again when told they changed, then logs that it did
        assert wait_until(lambda: f"URI: {tmp_path.resolve().as_uri()}" in tools["ev__get-roots-list"]())
        assert wait_until(lambda: any(isinstance(e, ServerLog) for e in logs))
    manager.set_roots([workspace])
    line = next(e for e in logs if isinstance(e, ServerLog))
    assert (line.server, line.level, line.logger) == ("ev", "info", "everything-server")
    assert line.message.startswith("Roots updated: 1 root(s) received from client")


def test_sampling_is_answered_by_the_kernels_sampler_and_charged_to_the_call(everything):
    manager, path, _ = everything
    asked, charged = [], []

    def sampler(request):
        asked.append(request)
        return SamplingReply(text="Paris.", model="fake-model", provider="fake", input_tokens=21, output_tokens=3)

    manager.set_sampler(sampler)
    context = ToolContext("call-9", charge_usage=lambda *usage: charged.append(usage))
    try:
        with context.active():
            out = manager.call("ev", "trigger-sampling-request", {"prompt": "Capital of France?", "maxTokens": 50}, 30)
    finally:
        manager.set_sampler(None)
    assert '"text": "Paris."' in out and '"model": "fake-model"' in out
    [request] = asked
    assert request.server == "ev" and request.call_id == "call-9"
    assert request.messages == [("user", "Resource trigger-sampling-request context: Capital of France?")]
    assert (request.system_prompt, request.max_tokens, request.temperature) == (
        "You are a helpful test server.", 50, 0.7)
    assert charged == [("fake", "fake-model", 21, 3, None, "sampling for MCP server 'ev'")]


def test_sampling_without_a_sampler_or_refused_is_a_one_line_error_and_the_server_stays_usable(everything):
    manager, path, _ = everything
    with pytest.raises(ToolError, match="jupyter-brain: sampling is not enabled in this kernel"):
        manager.call("ev", "trigger-sampling-request", {"prompt": "hi"}, 30)

    def refuse(request):
        raise SamplingRefused("the user declined the sampling request")

    manager.set_sampler(refuse)
    try:
        with pytest.raises(ToolError, match="the user declined the sampling request") as caught:
            manager.call("ev", "trigger-sampling-request", {"prompt": "hi"}, 30)
    finally:
        manager.set_sampler(None)
    assert "Traceback" not in str(caught.value)
    assert manager.call("ev", "echo", {"message": "still here"}, 30) == "Echo: still here"


def test_a_tool_timeout_cancels_the_request_and_the_server_stays_usable(manager, tmp_path):
    path = write_config(tmp_path, {"ev": npm_entry("mcp-server-everything", "stdio", tool_timeout_s=1)})
    tools = _tools(manager, path)
    executor = BoundedToolExecutor(AgentToolRegistry(list(tools.values()), permission_mode="auto"))
    outcomes = executor.execute([
        ToolCall(id="1", name="ev__trigger-long-running-operation", arguments={"duration": 600, "steps": 2}),
        ToolCall(id="2", name="ev__echo", arguments={"message": "after"}),
    ], ToolTurnState())
    assert [o.status for o in outcomes] == ["timeout", "ok"]
    assert outcomes[1].output == "Echo: after"
    assert manager.connections["ev"].state == "running"


def test_a_turn_shows_progress_and_counts_the_sampling_tokens_and_cost(everything):
    manager, path, _ = everything
    tools = _tools(manager, path)
    manager.set_sampler(lambda request: SamplingReply(text="Blue.", model="fake-model", provider="fake",
                                                      input_tokens=1000, output_tokens=50, cost_usd=0.25))
    bot = ScriptedProvider([
        {"text": "Working.", "tool_calls": [
            {"name": "ev__trigger-long-running-operation", "arguments": {"duration": 0.2, "steps": 2}},
            {"name": "ev__trigger-sampling-request", "arguments": {"prompt": "Sky colour?"}}]},
        "The server's model says blue.",
    ])
    harness = AgentHarness(bot, AgentToolRegistry(list(tools.values()), permission_mode="auto"), EventLog())
    try:
        result = harness.run_turn("s", [], "Run the long operation, then ask the server.")
    finally:
        manager.set_sampler(None)
    assert [c.status for c in result.tool_calls] == ["ok", "ok"]
    events = harness.event_log.events(turn_id=result.turn_id)
    long_call, sampling_call = (c.call_id for c in result.tool_calls)
    assert [(e.call_id, e.progress, e.total) for e in events if isinstance(e, ToolProgress)] == [
        (long_call, 1.0, 2.0), (long_call, 2.0, 2.0)]
    [sampling] = [e for e in events if isinstance(e, UsageEvent) and e.label]
    assert (sampling.call_id, sampling.label, sampling.input_tokens, sampling.output_tokens, sampling.cost_usd) == (
        sampling_call, "sampling for MCP server 'ev'", 1000, 50, 0.25)
    usage = [e for e in events if isinstance(e, UsageEvent)]
    assert result.input_tokens == sum(e.input_tokens for e in usage) >= 1000
    assert result.output_tokens == sum(e.output_tokens for e in usage) >= 50
    assert result.cost_usd is not None and result.cost_usd >= 0.25
    seqs = [e.seq for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)  # events from tool threads stay in order
