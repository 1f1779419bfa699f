"""Anthropic's server tools (tool search, programmatic tool calling) in whole turns.

The recordings (``recorded/anthropic/vercel-tool-search-*``, ``vercel-programmatic-tool-calling``,
vercel/ai's fixtures, see their sidecars) hold several messages in one stream: a
``message_start`` after a message ended goes on with the same answer. Through the real
SDK and ``AgentHarness``: the text streamed to the view is the answer's text and the text
saved in the transcript; the server's calls are rows of the timeline marked as the
server's, never run here, never answered with a tool result; the next request carries
their blocks as the API sent them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import pytest

from jupyter_brain.agent.events import EventLog, TextDelta, ToolCallEnd, ToolCallStart
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.anthropic import AnthropicProvider
from jupyter_brain.providers.base import ProviderError
from tests.providers.replay import Body, Recording, ReplayServer, recording

BM25 = recording("anthropic/vercel-tool-search-bm25")
REGEX = recording("anthropic/vercel-tool-search-regex")
PROGRAMMATIC = recording("anthropic/vercel-programmatic-tool-calling")
PLAIN = recording("anthropic/fantasy-cache-control-text")  # a real answer of text only, for the next call


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def payloads(rec: Recording) -> list[dict[str, Any]]:
    return [json.loads(line) for line in rec.data_path.read_text().splitlines() if line.strip()]


def as_body(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def message_texts(events: list[dict[str, Any]]) -> list[str]:
    """Each message's text, read straight from the events (our reading of them aside)."""
    texts: list[str] = []
    for e in events:
        if e["type"] == "message_start":
            texts.append("")
        elif e["type"] == "content_block_start" and e["content_block"]["type"] == "text":
            texts[-1] += e["content_block"]["text"]
        elif e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta":
            texts[-1] += e["delta"]["text"]
    return texts


def without_client_calls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stream with its function-tool blocks taken out: the answer ends the turn."""
    kept, message, dropped = [], -1, set()
    for e in events:
        if e["type"] == "message_start":
            message += 1
        if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use":
            dropped.add((message, e["index"]))
        if (message, e.get("index")) not in dropped:
            kept.append(e)
    return kept


def run(tmp_path: Path, bodies: list[bytes], tools: list[Any]) -> tuple[Any, list[Any], list[dict[str, Any]], EventLog]:
    log = EventLog(tmp_path / "events.sqlite")
    with ReplayServer(anthropic=True) as server:
        server.push(*(Body(b) for b in bodies))
        provider = AnthropicProvider("claude-recorded", api_key="sk-ant-replay", base_url=server.url, max_retries=0)
        harness = AgentHarness(provider, AgentToolRegistry(tools), log, stream=True)
        events: list[Any] = []
        result = harness.run_turn("s", [], "What's the weather in San Francisco?", on_event=events.append)
        sent = server.bodies("/v1/messages")
    return result, events, sent, log


def test_an_answer_over_two_messages_is_one_text_in_the_view_the_result_and_the_transcript(tmp_path: Path) -> None:
    stream = without_client_calls(payloads(BM25))
    first, last = message_texts(stream)
    result, events, _, log = run(tmp_path, [as_body(stream)], [])

    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert result.status == "completed"
    assert streamed == result.text == first + last  # not only the last message's
    assert first.startswith("I'll search for a weather-related tool") and last.startswith("The current weather")
    saved = log.load_history("s")
    assert saved[-1]["role"] == "assistant" and saved[-1]["content"] == result.text
    assert saved[-1]["native_content"]["blocks"][1]["type"] == "server_tool_use"


def test_the_servers_calls_are_rows_marked_as_the_servers_and_are_logged(tmp_path: Path) -> None:
    result, events, _, log = run(tmp_path, [as_body(without_client_calls(payloads(BM25)))], [])

    call_id = "srvtoolu_01Gj33J3YUAAxF9TWRAThxtu"
    rows = [e for e in events if getattr(e, "call_id", None) == call_id]
    assert [e.type for e in rows] == ["tool_call_start", "tool_call_args", "tool_call_end"]
    start, args, end = rows
    assert isinstance(start, ToolCallStart) and start.by_server and start.name == "tool_search_tool_bm25"
    assert args.arguments == {"query": "weather forecast current conditions"}
    assert isinstance(end, ToolCallEnd) and end.status == "ok"
    assert end.result_preview == "run by the provider's server (anthropic): found 1 tool: get_weather"
    [record] = result.tool_calls
    assert record.by_server and record.call_id == call_id
    logged = [e for e in log.events(turn_id=result.turn_id) if e.type == "tool_call_start"]
    assert [(e.call_id, e.by_server) for e in logged] == [(call_id, True)]  # a replayed view marks it too


def test_a_server_tool_is_never_run_or_answered_here_and_its_blocks_go_back_as_they_came(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool
    def get_temp_data(location: str) -> str:
        """The temperature at a place."""
        ran.append(location)
        return "64°F, partly cloudy"

    @tool
    def tool_search_tool_regex(pattern: str = "", limit: int = 0) -> str:
        """A function of the server tool's name: the server's call must never reach it."""
        pytest.fail("the server's tool search was run here")

    recorded = payloads(REGEX)
    result, events, sent, _ = run(tmp_path, [REGEX.body(), PLAIN.body()], [get_temp_data, tool_search_tool_regex])

    assert result.status == "completed" and ran == ["San Francisco, CA"]
    assert len(sent) == 2
    assistant, answers = sent[1]["messages"][1], sent[1]["messages"][2]
    assert [b["type"] for b in assistant["content"]] == [
        "server_tool_use", "tool_search_tool_result", "text", "tool_use", "text"]
    original = {e["content_block"]["type"]: e["content_block"] for e in recorded if e["type"] == "content_block_start"}
    search = assistant["content"][0]
    assert search == {**original["server_tool_use"], "input": {
        "pattern": "weather|SF|San Francisco|forecast|temperature|climate", "limit": 10}}  # its input, assembled
    assert assistant["content"][1] == original["tool_search_tool_result"]  # unchanged
    assert "".join(b.get("text", "") for b in assistant["content"]) == "".join(message_texts(recorded))
    results = [b for b in answers["content"] if b["type"] == "tool_result"]
    assert [b["tool_use_id"] for b in results] == [assistant["content"][3]["id"]]  # ours only, never the server's
    assert all(not (e.type == "tool_call_end" and e.call_id == search["id"] and e.status != "ok") for e in events)


def test_calls_made_by_the_servers_code_go_back_with_their_caller(tmp_path: Path) -> None:
    rolls: list[str] = []

    @tool
    def rollDie(player: str) -> str:  # the recorded tool's name
        """Roll a die for a player."""
        rolls.append(player)
        return "4"

    result, events, sent, log = run(tmp_path, [PROGRAMMATIC.body(), PLAIN.body()], [rollDie])

    assert sorted(rolls) == ["player1"] * 7 + ["player2"] * 7  # each call ran once (in parallel: any order)
    assistant = sent[1]["messages"][1]["content"]
    calls = [b for b in assistant if b["type"] == "tool_use"]
    assert len(calls) == 14
    assert {json.dumps(b["caller"], sort_keys=True) for b in calls} == {
        json.dumps({"type": "code_execution_20250825", "tool_id": "srvtoolu_01MzSrFWsmzBdcoQkGWLyRjK"}, sort_keys=True)}
    answered = [b["tool_use_id"] for b in sent[1]["messages"][2]["content"] if b["type"] == "tool_result"]
    assert sorted(answered) == sorted(b["id"] for b in calls)  # every call of the code answered, once
    server = [e for e in events if isinstance(e, ToolCallStart) and e.by_server]
    assert [e.name for e in server] == ["code_execution"]
    assert server[0].call_id not in answered
    [end] = [e for e in events if isinstance(e, ToolCallEnd) and e.call_id == server[0].call_id]
    assert end.result_preview.startswith("run by the provider's server (anthropic): return code 0\n=== DICE GAME")


def without_delta_input(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """message_delta usage as older API versions sent it: output tokens only."""
    return [{**e, "usage": {"output_tokens": e["usage"]["output_tokens"]}} if e["type"] == "message_delta" else e
            for e in events]


CONTINUED = [recording(f"anthropic/vercel-{name}") for name in (
    "tool-search-bm25", "tool-search-regex", "tool-search-deferred-bm25", "tool-search-deferred-regex",
    "programmatic-tool-calling")]
USAGE_CASES = [(rec.id, rec.body()) for rec in CONTINUED] + [
    ("bm25, deltas without input tokens", as_body(without_delta_input(payloads(BM25))))]


@pytest.mark.parametrize("body", [b for _, b in USAGE_CASES], ids=[i for i, _ in USAGE_CASES])
def test_usage_of_a_continued_answer_is_what_the_sdks_own_accumulator_reports(body: bytes) -> None:
    with ReplayServer(anthropic=True) as server:
        server.push(Body(body), Body(body))
        client = anthropic.Anthropic(api_key="sk-ant-replay", base_url=server.url, max_retries=0)
        with client.messages.stream(model="claude-recorded", max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as sdk:
            usage = sdk.get_final_message().usage
        provider = AnthropicProvider("claude-recorded", api_key="sk-ant-replay", base_url=server.url, max_retries=0)
        [*_, done] = provider.generate_stream([{"role": "user", "content": "hi"}], [], timeout_s=30)
    assert done.result is not None
    ours = done.result.usage
    assert (ours.input_tokens, ours.output_tokens, ours.cache_read_tokens, ours.cache_creation_tokens) == (
        usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens or 0, usage.cache_creation_input_tokens or 0)


def test_a_stream_cut_inside_a_later_message_is_a_cut_stream_not_an_answer() -> None:
    events = payloads(BM25)
    last_stop = max(i for i, e in enumerate(events) if e["type"] == "message_delta")
    with ReplayServer(anthropic=True) as server:
        server.push(Body(as_body(events[:last_stop])))
        provider = AnthropicProvider("claude-recorded", api_key="sk-ant-replay", base_url=server.url, max_retries=0)
        with pytest.raises(ProviderError) as caught:
            list(provider.generate_stream([{"role": "user", "content": "hi"}], [], timeout_s=30))
    assert caught.value.kind == "connection"  # the first message ended; the answer had not
