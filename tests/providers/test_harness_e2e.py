"""A full AgentHarness turn over each real provider and SDK, against its mock server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from mock_servers import MockAnthropic, MockOpenAI, Reply, ToolUse

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.anthropic import AnthropicProvider
from jupyter_brain.providers.openai_compat import OpenAICompatProvider


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def anthropic_server() -> Iterator[MockAnthropic]:
    with MockAnthropic() as s:
        yield s


@pytest.fixture
def openai_server() -> Iterator[MockOpenAI]:
    with MockOpenAI() as s:
        yield s


def harness(provider, **kw) -> AgentHarness:
    return AgentHarness(
        provider,
        tools=AgentToolRegistry([add]),
        event_log=EventLog(":memory:"),
        stream=True,
        workspace=lambda: "Variables: x = 41",
        reflect_on_tool_error=False,
        reflect_on_uncertainty=False,
        **kw,
    )


def test_anthropic_turn_with_a_tool_round_trip(anthropic_server) -> None:
    server = anthropic_server
    provider = AnthropicProvider(api_key="sk-test", base_url=server.url, max_retries=0)
    server.push(
        Reply(
            thinking=["x is 41, ", "so add 1."],
            signature="sig-e2e",
            text="Let me compute.",
            tool_calls=[ToolUse("add", {"a": 41, "b": 1}, id="toolu_e2e")],
            input_tokens=900,
            output_tokens=40,
            cache_creation_tokens=1200,
        ),
        Reply(text=["The answer ", "is 42."], input_tokens=60, output_tokens=9, cache_read_tokens=1200),
    )
    agent = harness(provider, think_level="low")
    result = agent.run_turn("s1", [], "What is x + 1?")

    assert result.status == "completed", result.error
    assert result.text == "The answer is 42."
    assert (result.input_tokens, result.output_tokens) == (960, 49)
    assert (result.cache_read_tokens, result.cache_creation_tokens) == (1200, 1200)
    assert [c.name for c in result.tool_calls] == ["add"] and "42" in result.tool_calls[0].output

    first, second = server.bodies("/v1/messages")
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    # The fresh workspace is the last (cached) system block, never part of the messages.
    assert first["system"][-1] == {"type": "text", "text": "Variables: x = 41", "cache_control": {"type": "ephemeral"}}
    assert "Variables" not in json.dumps(first["messages"])
    assert {t["name"] for t in first["tools"]} >= {"add"}
    assistant, tool_turn = second["messages"][1], second["messages"][2]
    assert assistant["content"][0] == {"type": "thinking", "thinking": "x is 41, so add 1.", "signature": "sig-e2e"}
    assert assistant["content"][-1]["type"] == "tool_use" and assistant["content"][-1]["id"] == "toolu_e2e"
    assert tool_turn["content"][0]["type"] == "tool_result"
    assert tool_turn["content"][0]["tool_use_id"] == "toolu_e2e" and "42" in tool_turn["content"][0]["content"]

    # The returned history is valid to continue from.
    server.push(Reply(text="Yes, 42."))
    again = agent.run_turn("s1", result.messages, "Sure?")
    assert again.status == "completed", again.error
    assert again.text == "Yes, 42."
    third = server.bodies("/v1/messages")[2]["messages"]
    assert [m["role"] for m in third] == ["user", "assistant", "user", "assistant", "user"]
    assert third[1]["content"][0]["signature"] == "sig-e2e"
    assert third[-1]["content"][0]["text"] == "Sure?"


def test_openai_compatible_turn_with_a_tool_round_trip(openai_server) -> None:
    server = openai_server
    provider = OpenAICompatProvider("mock-model", preset="vllm", base_url=server.url + "/v1", max_retries=0)
    server.push(
        Reply(
            thinking="I need the add tool.",
            tool_calls=[ToolUse("add", {"a": 41, "b": 1}, id="call_e2e")],
            input_tokens=300,
            cache_read_tokens=200,
            output_tokens=25,
        ),
        Reply(text=["<think>done</think>", "The answer ", "is 42."], input_tokens=50, output_tokens=6),
    )
    agent = harness(provider)
    result = agent.run_turn("s2", [], "What is x + 1?")

    assert result.status == "completed", result.error
    assert result.text == "The answer is 42."
    assert (result.input_tokens, result.output_tokens, result.cache_read_tokens) == (350, 31, 200)
    assert "42" in result.tool_calls[0].output

    first, second = server.bodies("/chat/completions")
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][0]["content"].endswith("Variables: x = 41")  # workspace last
    sent = second["messages"]
    assert sent[2]["tool_calls"][0]["id"] == "call_e2e"
    assert sent[3]["role"] == "tool" and sent[3]["tool_call_id"] == "call_e2e" and "42" in sent[3]["content"]
    assert "I need the add tool" not in str(sent)

    server.push(Reply(text="Yes, 42."))
    again = agent.run_turn("s2", result.messages, "Sure?")
    assert again.status == "completed", again.error
    roles = [m["role"] for m in server.bodies("/chat/completions")[2]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def test_anthropic_deferred_tool_is_loaded_and_the_tool_block_stays_cached(anthropic_server) -> None:
    """Semantic selection offers ``add`` and ``find_tools``; the model loads ``shout`` and
    calls it in the same turn. Every request's last tool carries the cache breakpoint, at
    most four breakpoints in all, and the bodies are valid for the SDK's request types."""
    server = anthropic_server
    provider = AnthropicProvider(api_key="sk-test", base_url=server.url, max_retries=0)
    server.push(
        Reply(tool_calls=[ToolUse("find_tools", {"query": "shout"}, id="toolu_find")]),
        Reply(tool_calls=[ToolUse("shout", {"text": "hi"}, id="toolu_shout")]),
        Reply(text="HI"),
    )
    agent = AgentHarness(provider, tools=AgentToolRegistry([add, shout]), event_log=EventLog(":memory:"),
                         stream=True, enable_semantic_selection=True, max_tools_per_turn=1)
    result = agent.run_turn("s1", [], "add two integers")
    assert result.status == "completed", result.error
    assert [(c.name, c.output) for c in result.tool_calls][1] == ("shout", "HI")
    bodies = server.bodies("/v1/messages")
    names = [[t["name"] for t in body["tools"]] for body in bodies]
    assert names[0] == ["add", "find_tools"] and names[1] == names[2] == ["add", "find_tools", "shout"]
    for body in bodies:
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert all("cache_control" not in t for t in body["tools"][:-1])
        assert json.dumps(body).count('"cache_control"') <= 4
