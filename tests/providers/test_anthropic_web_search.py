"""Anthropic's server-side web search against real recorded answers.

- the stream ``recorded/anthropic/vercel-web-search-citations.jsonl`` (a real
  claude-sonnet-4 answer kept by the AI SDK, vercel/ai, see its sidecar), replayed through
  the real ``anthropic`` SDK by a loopback server;
- the whole (non-streaming) response ``tests/fixtures/anthropic/web_search_message.json``
  (vercel/ai ``anthropic-web-search-tool.1.json``, source in the file).

The server tool's blocks are read (query, results, citations) and go back unchanged, in
order, in the next request; providers that do not run the tool never see them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry
from jupyter_brain.providers import openai_wire
from jupyter_brain.providers.anthropic import AnthropicProvider, to_wire, wire_tools
from jupyter_brain.providers.anthropic_server_tools import web_search_tool
from jupyter_brain.providers.anthropic_stream import result_from_message
from jupyter_brain.providers.base import ProviderResult, is_server_tool
from jupyter_brain.providers.capabilities import ServerWebSearch, server_web_search
from jupyter_brain.providers.openai_compat import OpenAICompatProvider
from jupyter_brain.providers.scripted import ScriptedProvider
from tests.providers.replay import Body, ReplayServer, recording

STREAM = recording("anthropic/vercel-web-search-citations")
PLAIN = recording("anthropic/fantasy-cache-control-text")  # a real answer of text only, for the next call
MESSAGE = json.loads((Path(__file__).parents[1] / "fixtures" / "anthropic" / "web_search_message.json").read_text())
QUERY = "tech news today September 26 2025"
QUESTION = [{"role": "user", "content": "What tech news is there today?"}]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def provider(server: ReplayServer) -> AnthropicProvider:
    return AnthropicProvider("claude-recorded", api_key="sk-ant-replay", base_url=server.url, max_retries=0)


def recorded_events(rec: Any = STREAM) -> list[dict[str, Any]]:
    return [json.loads(line) for line in rec.data_path.read_text().splitlines() if line.strip()]


def as_jsonl_body(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def stream_once(*bodies: bytes, tools: list[dict[str, Any]] | None = None) -> tuple[ProviderResult, list[Any], str]:
    with ReplayServer(anthropic=True) as server:
        server.push(*(Body(b) for b in bodies))
        events = list(provider(server).generate_stream(QUESTION, tools or [web_search_tool()], timeout_s=30))
        return events[-1].result, server.bodies("/v1/messages"), events[:-1]


# -- reading the answer ------------------------------------------------------------------

def test_the_streamed_answer_holds_its_search_citations_and_blocks() -> None:
    result, bodies, events = stream_once(STREAM.body())

    assert result.text.startswith("Based on my search results") and len(result.text) == 2402
    assert "".join(e.text for e in events if e.type == "text") == result.text
    assert result.tool_calls == []  # a server tool is never the client's to run
    [search] = result.server_tools
    assert (search.id, search.name, search.input) == ("srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k", "web_search", {"query": QUERY})
    assert search.error is None and len(search.results) == 10
    assert search.results[0]["url"] == "https://www.crescendo.ai/news/latest-ai-news-and-updates"
    cited = {c.url for c in result.citations}
    assert len(result.citations) == 14 and len(cited) == 4
    assert "https://9to5mac.com/2025/09/22/ios-26-1-beta-1/" in cited
    first = result.citations[0]
    assert first.title.startswith("The all-new Apple Ginza opens") and first.cited_text.startswith("Apple today announced")

    blocks = result.native_content["blocks"]  # type: ignore[index]
    assert result.native_content["provider"] == "anthropic"  # type: ignore[index]
    assert [b["type"] for b in blocks[:4]] == ["server_tool_use", "web_search_tool_result", "text", "text"]
    assert len(blocks) == 21 and "".join(b.get("text", "") for b in blocks) == result.text
    # The search's result block is kept exactly as the API sent it.
    sent = next(e["content_block"] for e in recorded_events() if e.get("content_block", {}).get("type") == "web_search_tool_result")
    assert blocks[1] == sent
    assert blocks[3]["citations"][0]["encrypted_index"]  # what the API needs back
    # The server tool was offered as it is.
    assert bodies[0]["tools"][0]["type"] == "web_search_20250305" and bodies[0]["tools"][0]["max_uses"] == 5


def test_the_whole_response_reads_the_same_way() -> None:
    response = MESSAGE["response"]
    result = result_from_message(response)

    texts = [b["text"] for b in response["content"] if b["type"] == "text"]
    assert result.text == "".join(texts) and result.stop_reason == "end_turn"
    assert [s.input["query"] for s in result.server_tools] == [
        b["input"]["query"] for b in response["content"] if b["type"] == "server_tool_use"
    ]
    assert [len(s.results) for s in result.server_tools] == [10, 0]  # the second search found nothing
    assert len(result.citations) == 3 and {c.url for c in result.citations} == {
        c["url"] for b in response["content"] if b["type"] == "text" for c in b.get("citations") or []
    }
    assert result.usage.input_tokens == 27118 and result.usage.output_tokens == 600
    blocks = result.native_content["blocks"]  # type: ignore[index]
    assert [b["type"] for b in blocks] == [b["type"] for b in response["content"]]
    assert blocks[1] == response["content"][1]


def test_an_answer_without_server_tools_has_no_native_content() -> None:
    result, _, _ = stream_once(PLAIN.body())
    assert result.native_content is None and result.server_tools == [] and result.citations == []
    assert "native_content" not in result.to_message()


# -- sending it back -----------------------------------------------------------------------

def test_the_next_request_sends_the_blocks_back_as_they_came() -> None:
    first, _, _ = stream_once(STREAM.body())
    history = [*QUESTION, first.to_message(), {"role": "user", "content": "And Apple?"}]
    with ReplayServer(anthropic=True) as server:
        server.push(Body(PLAIN.body()))
        list(provider(server).generate_stream(history, [web_search_tool()], timeout_s=30))
        [body] = server.bodies("/v1/messages")

    assistant = body["messages"][1]
    assert assistant["role"] == "assistant"
    content = assistant["content"]
    original = [e["content_block"] for e in recorded_events() if e["type"] == "content_block_start"]
    assert content[0] == {**original[0], "input": {"query": QUERY}}  # the query, assembled from its deltas
    assert content[1] == original[1]  # results with their encrypted content, unchanged
    cited = [b for b in content if b.get("citations")]
    assert len(cited) == 9 and all(c["encrypted_index"] for b in cited for c in b["citations"])
    assert all(b["text"].strip() for b in content if b["type"] == "text")  # whitespace-only blocks left out
    assert "".join("".join(b.get("text", "") for b in content).split()) == "".join(first.text.split())
    assert body["messages"][2] == {"role": "user", "content": [
        {"type": "text", "text": "And Apple?", "cache_control": {"type": "ephemeral"}}]}


def test_a_web_search_beside_a_function_call_keeps_the_order_of_its_blocks() -> None:
    """vercel/ai's test data for the order the API answers in (a function call before the
    server search in one answer, their issue 13013); the ids and page are theirs."""
    response = {
        "content": [
            {"type": "text", "text": "I'll save the results and search for the latest news."},
            {"type": "tool_use", "id": "toolu_01SaveResults", "name": "save_results", "input": {"filename": "news.txt"}},
            {"type": "server_tool_use", "id": "srvtoolu_01WebSearch", "name": "web_search", "input": {"query": "latest news"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01WebSearch", "content": [
                {"type": "web_search_result", "url": "https://example.com/news", "title": "Breaking News Today",
                 "encrypted_content": "EqMBCioICBgCIiRiY2JjZWJjMy1lYTFhLTRmNjktYTUwMy01YzgwNWU1Y2U0NzESDA==",
                 "page_age": "1 hour ago"}]},
        ],
        "stop_reason": "tool_use", "usage": {"input_tokens": 80, "output_tokens": 60},
    }
    result = result_from_message(response)
    assert [c.name for c in result.tool_calls] == ["save_results"]
    tool_result = {"role": "tool", "tool_call_id": "toolu_01SaveResults", "name": "save_results", "content": "saved"}
    _, wire = to_wire([*QUESTION, result.to_message(), tool_result])
    sent = wire[1]["content"]
    assert [b["type"] for b in sent] == ["text", "tool_use", "server_tool_use", "web_search_tool_result"]
    assert sent[1] == {"type": "tool_use", "id": "toolu_01SaveResults", "name": "save_results",
                       "input": {"filename": "news.txt"}}
    assert sent[3] == response["content"][3]
    assert wire[2]["content"][0]["tool_use_id"] == "toolu_01SaveResults"


def test_a_changed_message_goes_as_plain_text_without_the_server_blocks() -> None:
    message = result_from_message(MESSAGE["response"]).to_message()
    message["content"] += "\n\n[The turn was interrupted.]"  # e.g. a note joined when a turn stops
    _, wire = to_wire([*QUESTION, message])
    assert [b["type"] for b in wire[1]["content"]] == ["text"]
    assert wire[1]["content"][0]["text"] == message["content"]


def test_the_native_blocks_in_the_history_are_not_changed_by_sending() -> None:
    message = result_from_message(MESSAGE["response"]).to_message()
    kept = copy.deepcopy(message)
    to_wire([*QUESTION, message])
    assert message == kept  # cache_control goes on copies


def test_a_paused_search_turn_is_sent_back_and_resumed_as_one_answer() -> None:
    paused = recorded_events()
    delta = next(e for e in paused if e["type"] == "message_delta")
    delta["delta"]["stop_reason"] = "pause_turn"  # the API pausing a long server-tool turn
    result, bodies, _ = stream_once(as_jsonl_body(paused), PLAIN.body())

    assert len(bodies) == 2
    resumed = bodies[1]["messages"]
    assert resumed[-1]["role"] == "assistant" and resumed[-1]["content"][0]["type"] == "server_tool_use"
    assert result.stop_reason == "end_turn" and result.text.startswith("Based on my search results")
    assert result.text.endswith("for a more casual \"hi!\"")  # the resumed part follows
    assert result.usage.output_tokens == 795 + 43
    assert len(result.server_tools) == 1 and len(result.citations) == 14


# -- the capability, and providers without it ---------------------------------------------

def test_only_a_provider_that_runs_the_search_declares_it() -> None:
    anthropic = AnthropicProvider("claude-x", api_key="sk-ant-x")
    assert isinstance(anthropic, ServerWebSearch)
    assert server_web_search(anthropic, 3) == {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
    openai = OpenAICompatProvider("gpt-x", api_key="sk-x", base_url="http://127.0.0.1:9/v1")
    for other in (openai, ScriptedProvider(["x"])):
        assert not isinstance(other, ServerWebSearch) and server_web_search(other) is None


def test_other_providers_skip_the_server_tool_and_its_blocks() -> None:
    schema = web_search_tool()
    assert is_server_tool(schema) and wire_tools([schema]) == [{**schema, "cache_control": {"type": "ephemeral"}}]
    assert openai_wire.wire_tools([schema]) == []
    message = result_from_message(MESSAGE["response"]).to_message()
    [assistant] = [m for m in openai_wire.to_wire([*QUESTION, message]) if m["role"] == "assistant"]
    assert assistant["content"] == message["content"] and "native_content" not in assistant


# -- a whole turn ---------------------------------------------------------------------------

def test_a_turn_with_web_mode_on_uses_the_server_search_and_collects_its_citations() -> None:
    searched: list[str] = []
    with ReplayServer(anthropic=True) as server:
        server.push(Body(STREAM.body()))
        harness = AgentHarness(provider(server), AgentToolRegistry(), EventLog(":memory:"), stream=True,
                               web_search=lambda q: searched.append(q) or [])
        events: list[Any] = []
        result = harness.run_turn("s", [], "What tech news is there today?", web_mode="on", on_event=events.append)
        [body] = server.bodies("/v1/messages")

    assert result.status == "completed" and result.text.startswith("Based on my search results")
    assert searched == []  # the provider's own search comes first
    assert [t.get("type") for t in body["tools"] if t["name"] == "web_search"] == ["web_search_20250305"]
    assert [c["url"] for c in result.web_citations] == [
        "https://www.apple.com/newsroom/2025/09/the-all-new-apple-ginza-opens-this-friday-september-26-in-tokyo/",
        "https://future.forem.com/junyu_fang_a216509a97501d/fang-junyus-technology-weekly-september-26-2025-2ndd",
        "https://future.forem.com/om_shree_0709/major-tech-news-september-25-2025-5h38",
        "https://9to5mac.com/2025/09/22/ios-26-1-beta-1/",
    ]
    assert all(c["title"] for c in result.web_citations)
    assert result.rendered_content_paths == []  # the server's pages are encrypted: nothing to save
    rows = [e for e in events if getattr(e, "call_id", None) == "srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k"]
    assert [e.type for e in rows] == ["tool_call_start", "tool_call_args", "tool_call_end"]
    assert rows[1].arguments == {"query": QUERY} and rows[2].status == "ok"
    assert "crescendo.ai" in rows[2].result_preview
    assert [c.name for c in result.tool_calls] == ["web_search"]
    assert result.messages[-1]["native_content"]["blocks"][0]["type"] == "server_tool_use"
