"""#12 item 9 / #16: figures and MCP images reach the model as images (Anthropic image
blocks in the tool_result, OpenAI image_url parts in a user message after the tool
messages), a note for models without vision; views get small data URLs."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
from mock_servers import MockAnthropic, MockOpenAI, Reply, ToolUse

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.images import ToolImage, ToolResult
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.foundation.catalog import accepts_images
from jupyter_brain.foundation.tokens import IMAGE_TOKENS, TokenCounter
from jupyter_brain.providers.anthropic import AnthropicProvider
from jupyter_brain.providers.base import NO_IMAGES_NOTE
from jupyter_brain.providers.openai_compat import OpenAICompatProvider
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.tools.python_exec import python_tools
from jupyter_brain.widgets import TextView
from jupyter_brain.widgets.text_view import events_to_markdown

PLOT = "import matplotlib.pyplot as plt\nplt.figure(); plt.plot([1, 3, 2]); plt.title('Sales');"


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    yield
    plt.close("all")


def _harness(provider: Any) -> tuple[AgentHarness, list[Any]]:
    registry = AgentToolRegistry(python_tools({"plt": plt}), permission_mode="auto")
    return AgentHarness(provider, registry, EventLog(), stream=True), []


def _plot_turn(server: Any, provider: Any) -> tuple[Any, list[Any], list[Any]]:
    server.push(Reply(text="Plotting.", tool_calls=[ToolUse("run_python", {"code": PLOT}, id="call_plot1")]),
                Reply(text="The line peaks in the middle."))
    harness, events = _harness(provider)
    result = harness.run_turn("s", [], "plot sales", on_event=events.append)
    bodies = [r.body for r in server.requests if r.method == "POST" and r.path.endswith(("/messages", "/completions"))]
    return result, events, bodies


def _png(data: str) -> bytes:
    raw = base64.b64decode(data)
    assert raw.startswith(b"\x89PNG")
    return raw


def test_a_figure_reaches_anthropic_as_an_image_block_in_the_tool_result() -> None:
    with MockAnthropic() as server:
        provider = AnthropicProvider(api_key="sk-test", base_url=server.url, max_retries=0)
        result, events, bodies = _plot_turn(server, provider)
    assert result.status == "completed", result.error
    blocks = [b for m in bodies[1]["messages"] for b in m["content"] if b.get("type") == "tool_result"]
    content = blocks[0]["content"]
    assert content[0]["type"] == "text" and "attached as images" in content[0]["text"]
    image = content[1]
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    _png(image["source"]["data"])
    # the view: a data URL on the tool's end event, drawn in the row; the text view names it
    end = next(e for e in events if e.type == "tool_call_end")
    assert len(end.images) == 1 and end.images[0].startswith("data:image/png;base64,")
    assert "base64" not in end.result_preview
    out = io.StringIO()
    TextView(out).replay(events)
    assert "1 figure (shown to the model)" in out.getvalue()
    assert "![figure 1 from run_python](data:image/png;base64," in events_to_markdown(events)
    assert result.tool_calls[0].images == end.images


def test_a_figure_reaches_openai_as_image_url_parts_after_the_tool_messages() -> None:
    with MockOpenAI() as server:
        provider = OpenAICompatProvider("gpt-4o", api_key="sk-test", base_url=server.url + "/v1", max_retries=0)
        result, _, bodies = _plot_turn(server, provider)
    assert result.status == "completed", result.error
    messages = bodies[1]["messages"]
    roles = [m["role"] for m in messages]
    assert roles[-2:] == ["tool", "user"]
    assert isinstance(messages[-2]["content"], str)  # tool messages stay text
    parts = messages[-1]["content"]
    assert parts[0]["type"] == "text"
    url = parts[1]["image_url"]["url"]
    assert parts[1]["type"] == "image_url" and url.startswith("data:image/png;base64,")
    _png(url.split(",", 1)[1])


def test_a_model_without_vision_reads_a_note_instead() -> None:
    assert not accepts_images("llama3.1:8b") and accepts_images("llava:13b") and accepts_images("gpt-4o-mini")
    with MockOpenAI(models=["llama3.1:8b"]) as server:
        provider = OpenAICompatProvider("llama3.1:8b", preset="ollama", base_url=server.url + "/v1", max_retries=0)
        result, _, bodies = _plot_turn(server, provider)
    assert result.status == "completed", result.error
    messages = bodies[1]["messages"]
    assert messages[-1]["role"] == "tool" and messages[-1]["content"].endswith(NO_IMAGES_NOTE)
    assert "image_url" not in json.dumps(bodies[1])
    # overridable per provider
    assert OpenAICompatProvider("llama3.1:8b", preset="ollama", base_url=server.url + "/v1", vision=True).takes_images


def test_the_scripted_provider_records_the_images_and_history_keeps_them() -> None:
    provider = ScriptedProvider([{"tool_calls": [{"name": "run_python", "arguments": {"code": PLOT}}]}, "ok"])
    harness, events = _harness(provider)
    result = harness.run_turn("s", [], "plot", on_event=events.append)
    tool_msg = next(m for m in provider.calls[1]["messages"] if m["role"] == "tool")
    assert tool_msg["images"][0]["media_type"] == "image/png"
    assert next(m for m in result.messages if m["role"] == "tool")["images"] == tool_msg["images"]


def test_an_image_costs_a_fixed_number_of_tokens_not_its_bytes() -> None:
    counter = TokenCounter()
    plain = {"role": "tool", "tool_call_id": "c", "name": "t", "content": "chart", "is_error": False}
    big = {**plain, "images": [{"media_type": "image/png", "data": "A" * 2_000_000}]}
    assert counter.count_message(big) - counter.count_message(plain) == IMAGE_TOKENS


@tool(effect="read")
def chart() -> ToolResult:
    """A tool returning an image (as an MCP image result becomes)."""
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 64).decode()
    return ToolResult("[image: image/png]", [ToolImage("image/png", png), ToolImage("text/html", "PGI+")])


def test_only_image_media_types_reach_the_model_and_the_view() -> None:
    provider = ScriptedProvider([{"tool_calls": [{"name": "chart", "arguments": {}}]}, "ok"])
    events: list[Any] = []
    AgentHarness(provider, AgentToolRegistry([chart]), EventLog()).run_turn("s", [], "x", on_event=events.append)
    tool_msg = next(m for m in provider.calls[1]["messages"] if m["role"] == "tool")
    assert [im["media_type"] for im in tool_msg["images"]] == ["image/png"]
    end = next(e for e in events if e.type == "tool_call_end")
    assert len(end.images) == 1 and end.images[0].startswith("data:image/png;base64,")


def test_an_mcp_image_result_reaches_the_model(tmp_path) -> None:
    from jupyter_brain.mcp.manager import MCPManager
    from tests.mcp_client.servers import stdio_entry, write_config

    manager = MCPManager(startup_timeout_s=120)  # a bound on the start only: a loaded machine starts servers slowly
    try:
        specs = manager.tools(write_config(tmp_path, {"demo": stdio_entry()}))
        with MockAnthropic() as server:
            server.push(Reply(tool_calls=[ToolUse("demo__chart", {}, id="toolu_c1")]), Reply(text="A red square."))
            provider = AnthropicProvider(api_key="sk-test", base_url=server.url, max_retries=0)
            harness = AgentHarness(provider, AgentToolRegistry(specs, permission_mode="auto"), EventLog(), stream=True)
            result = harness.run_turn("s", [], "draw", on_event=None)
            body = [r.body for r in server.requests if r.method == "POST" and r.path.endswith("/messages")][1]
    finally:
        manager.shutdown()
    assert result.status == "completed", result.error
    block = next(b for m in body["messages"] for b in m["content"] if b.get("type") == "tool_result")
    assert block["content"][0]["type"] == "text" and "attached to this result as an image" in block["content"][0]["text"]
    assert block["content"][1]["type"] == "image"
    _png(block["content"][1]["source"]["data"])


def test_compaction_drops_the_images_of_old_tool_results_first() -> None:
    from jupyter_brain.agent.images import drop_old_images

    image = {"media_type": "image/png", "data": "AAAA"}
    old = {"role": "tool", "tool_call_id": "a", "name": "t", "content": "plot", "is_error": False, "images": [image]}
    new = {**old, "tool_call_id": "b"}
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "b", "name": "t", "arguments": {}}]}
    messages = [{"role": "user", "content": "q"}, old, call, new]
    assert drop_old_images(messages) == 1
    assert "images" not in messages[1] and "1 image(s) of this result dropped" in messages[1]["content"]
    assert messages[3]["images"] == [image] and old["images"] == [image]  # the latest run stays; no mutation


def test_a_history_heavy_with_figures_sheds_them_before_compacting() -> None:
    image = {"media_type": "image/png", "data": "AAAA"}
    history: list[dict[str, Any]] = []
    for k in range(12):
        call_id = f"c{k}"
        history += [{"role": "user", "content": f"plot {k}"},
                    {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "name": "t", "arguments": {}}]},
                    {"role": "tool", "tool_call_id": call_id, "name": "t", "content": "fig", "is_error": False,
                     "images": [image]},
                    {"role": "assistant", "content": "done"}]
    events: list[Any] = []
    harness = AgentHarness(ScriptedProvider(["ok"]), AgentToolRegistry(), EventLog(), context_budget=12_000)
    result = harness.run_turn("s", history, "next", on_event=events.append)
    compactions = [e for e in events if e.type == "compaction"]
    assert compactions and compactions[0].strategy == "drop_images"
    assert sum(len(m.get("images") or []) for m in result.messages) == 0
    assert len(result.messages) == len(history) + 2  # nothing else was compacted
