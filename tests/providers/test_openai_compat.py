"""OpenAICompatProvider with the real ``openai`` SDK against a mock Chat Completions server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from mock_servers import HttpError, MockOpenAI, Reply, ToolUse

from jupyter_brain.providers.base import ProviderError, ProviderResult, StreamEvent
from jupyter_brain.providers.openai_compat import OpenAICompatProvider, to_wire

SECRET = "sk-openai-test-not-a-real-key"
ADD_TOOL = {
    "name": "add",
    "description": "Add two integers.",
    "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
}


@pytest.fixture
def server() -> Iterator[MockOpenAI]:
    with MockOpenAI(models=["qwen3:8b", "llama3.2"]) as s:
        yield s


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def provider(server: MockOpenAI) -> OpenAICompatProvider:
    return OpenAICompatProvider("gpt-test", api_key=SECRET, base_url=server.url + "/v1", max_retries=2)


def stream(provider: OpenAICompatProvider, messages: list, tools: list | None = None) -> tuple[list[StreamEvent], ProviderResult]:
    events = list(provider.generate_stream(messages, tools or []))
    assert events[-1].type == "done" and events[-1].result is not None
    return events[:-1], events[-1].result


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def test_streamed_text_arrives_as_separate_events(provider, server) -> None:
    server.push(Reply(text=["Hel", "lo, ", "world"]))
    events, result = stream(provider, [user("hi")])
    assert [(e.type, e.text) for e in events] == [("text", "Hel"), ("text", "lo, "), ("text", "world")]
    assert result.text == "Hello, world" and result.stop_reason == "end_turn"
    body = server.bodies("/chat/completions")[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == "gpt-test" and "tools" not in body


def test_events_are_yielded_while_the_response_is_still_streaming(provider, server) -> None:
    server.push(Reply(text=["first", " second"], hold_after=2))
    events = provider.generate_stream([user("hi")], [])
    first = next(events)
    assert (first.type, first.text) == ("text", "first")
    server.release.set()
    assert [e.type for e in events] == ["text", "done"]


def test_think_tags_split_across_chunks_become_thinking(provider, server) -> None:
    server.push(Reply(text=["<th", "ink>\nI am thin", "king</thi", "nk>\n\nThe ", "answer"]))
    events, result = stream(provider, [user("hi")])
    kinds = [e.type for e in events]
    assert "".join(e.text for e in events if e.type == "thinking") == "I am thinking"
    assert kinds.count("thinking_end") == 1
    assert kinds.index("thinking_end") < kinds.index("text")
    assert "".join(e.text for e in events if e.type == "text") == "The answer"
    assert result.text == "The answer"
    assert [b.text for b in result.thinking] == ["I am thinking"]
    assert result.thinking[0].signature is None


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_delta_fields_become_thinking(provider, server, field: str) -> None:
    server.push(Reply(thinking=["Step one. ", "Step two."], thinking_style=field, text=["Done", "."]))
    events, result = stream(provider, [user("hi")])
    assert [e.type for e in events] == ["thinking", "thinking", "thinking_end", "text", "text"]
    assert result.thinking[0].text == "Step one. Step two." and result.text == "Done."


def test_reasoning_then_tool_call_closes_the_thinking_block(provider, server) -> None:
    server.push(Reply(thinking="plan", tool_calls=[ToolUse("add", {"a": 1, "b": 2}, id="call_x")]))
    events, result = stream(provider, [user("hi")], [ADD_TOOL])
    kinds = [e.type for e in events if e.type != "thinking"]
    assert kinds[:2] == ["thinking_end", "tool_call_start"]
    assert [e.type for e in events].index("thinking_end") > 0
    assert result.stop_reason == "tool_use" and result.tool_calls[0].arguments == {"a": 1, "b": 2}


def test_parallel_tool_calls_with_fragmented_arguments(provider, server) -> None:
    server.push(
        Reply(
            text="Working.",
            tool_calls=[
                ToolUse("add", {"a": 1, "b": 2}, id="call_a", pieces=4),
                ToolUse("add", {"a": 10, "b": 20}, id="call_b", pieces=3),
            ],
        )
    )
    events, result = stream(provider, [user("go")], [ADD_TOOL])
    starts = [(e.index, e.tool_call_id, e.name) for e in events if e.type == "tool_call_start"]
    assert starts == [(0, "call_a", "add"), (1, "call_b", "add")]
    for index, call_id, _ in starts:
        fragments = [e.text for e in events if e.type == "tool_call_args" and e.tool_call_id == call_id]
        assert len(fragments) > 1
        assert json.loads("".join(fragments)) == result.tool_calls[index].arguments
    assert [(c.id, c.arguments) for c in result.tool_calls] == [
        ("call_a", {"a": 1, "b": 2}),
        ("call_b", {"a": 10, "b": 20}),
    ]
    assert result.text == "Working." and result.stop_reason == "tool_use"
    body = server.bodies("/chat/completions")[0]
    assert body["tools"] == [
        {"type": "function", "function": {"name": "add", "description": "Add two integers.", "parameters": ADD_TOOL["input_schema"]}}
    ]


def test_parallel_calls_reusing_one_index_are_kept_apart(provider, server) -> None:
    # Some servers send every call with index 0; a new id means a new call.
    server.push(
        Reply(tool_calls=[ToolUse("add", {"a": 1, "b": 1}, id="c1", index=0), ToolUse("add", {"a": 2, "b": 2}, id="c2", index=0)])
    )
    _, result = stream(provider, [user("go")], [ADD_TOOL])
    assert [(c.id, c.arguments) for c in result.tool_calls] == [("c1", {"a": 1, "b": 1}), ("c2", {"a": 2, "b": 2})]


def test_tool_loop_wire_format(provider, server) -> None:
    server.push(
        Reply(thinking="hmm", tool_calls=[ToolUse("add", {"a": 2, "b": 3}, id="call_1")]),
        Reply(text="5"),
    )
    history = [
        {"role": "system", "content": "workspace: df", "kind": "workspace"},
        {"role": "system", "content": "You are terse."},
        user("2+3?"),
    ]
    _, result = stream(provider, history, [ADD_TOOL])
    history += [
        result.to_message(),
        {"role": "tool", "tool_call_id": "call_1", "name": "add", "content": "5", "is_error": False},
    ]
    _, final = stream(provider, history, [ADD_TOOL])
    assert final.text == "5"
    sent = server.bodies("/chat/completions")[1]["messages"]
    assert sent[0] == {"role": "system", "content": "You are terse.\n\nworkspace: df"}
    assert sent[1] == {"role": "user", "content": "2+3?"}
    assert sent[2] == {
        "role": "assistant",
        "content": "",  # not null: llama.cpp's server answers HTTP 500 to a null content
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}],
    }
    assert "hmm" not in json.dumps(sent)  # thinking is not sent back
    assert sent[3] == {"role": "tool", "tool_call_id": "call_1", "content": "5"}


def test_tool_errors_are_marked_in_content() -> None:
    wire = to_wire([{"role": "tool", "tool_call_id": "c", "name": "x", "content": "boom", "is_error": True}])
    assert wire == [{"role": "tool", "tool_call_id": "c", "content": "ERROR: boom"}]


def test_usage_with_cached_tokens(provider, server) -> None:
    server.push(Reply(text="ok", input_tokens=100, cache_read_tokens=400, output_tokens=9))
    _, result = stream(provider, [user("hi")])
    u = result.usage
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.cache_creation_tokens) == (100, 400, 9, 0)


def test_rate_limit_then_success_uses_the_sdk_retry(provider, server) -> None:
    server.push(HttpError(429, "slow down", headers={"retry-after": "0.05"}), Reply(text="ok"))
    _, result = stream(provider, [user("hi")])
    assert result.text == "ok"
    assert len(server.requests) == 2
    assert server.requests[1].headers["x-stainless-retry-count"] == "1"


def test_server_errors_raise_after_retries(server) -> None:
    provider = OpenAICompatProvider("m", api_key=SECRET, base_url=server.url + "/v1", max_retries=1)
    fast = {"retry-after-ms": "10"}
    server.push(HttpError(500, "boom", headers=fast), HttpError(500, "boom", headers=fast))
    with pytest.raises(ProviderError) as info:
        provider.generate([user("hi")], [])
    assert (info.value.kind, info.value.status_code, info.value.provider) == ("server", 500, "openai")
    assert len(server.requests) == 2


@pytest.mark.parametrize(("status", "kind"), [(400, "bad_request"), (401, "auth"), (404, "bad_request"), (429, "rate_limit")])
def test_http_errors_map_to_kinds(server, status: int, kind: str) -> None:
    provider = OpenAICompatProvider("m", api_key=SECRET, base_url=server.url + "/v1", max_retries=0)
    server.push(HttpError(status, "nope"))
    with pytest.raises(ProviderError) as info:
        provider.generate([user("hi")], [])
    assert (info.value.kind, info.value.status_code) == (kind, status)
    assert SECRET not in str(info.value)


def test_error_chunk_mid_stream_raises(provider, server) -> None:
    server.push(Reply(text=["partial", " more"], error_after=2, error_type="server_error"))
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        for event in provider.generate_stream([user("hi")], []):
            seen.append(event)
    assert [(e.type, e.text) for e in seen] == [("text", "partial")]
    assert info.value.kind == "stream" and "mock stream error" in str(info.value)


def test_dropped_connection_mid_stream_raises(provider, server) -> None:
    server.push(Reply(text=["a", "b", "c"], drop_after=3))
    with pytest.raises(ProviderError) as info:
        list(provider.generate_stream([user("hi")], []))
    assert info.value.kind == "connection"


def test_stream_ending_without_finish_reason_raises(provider, server) -> None:
    server.push(Reply(text=["a", "b"], truncate_after=2))
    with pytest.raises(ProviderError) as info:
        provider.generate([user("hi")], [])
    assert info.value.kind == "connection"


def test_malformed_tool_arguments_are_kept_raw(provider, server) -> None:
    raw = '{"a": 1, "b": '
    server.push(Reply(tool_calls=[ToolUse("add", raw=raw, id="call_bad")]))
    _, result = stream(provider, [user("hi")], [ADD_TOOL])
    (call,) = result.tool_calls
    assert (call.id, call.arguments, call.raw_arguments) == ("call_bad", {}, raw)


def test_missing_key_is_a_clear_auth_error() -> None:
    with pytest.raises(ProviderError) as info:
        OpenAICompatProvider()
    assert info.value.kind == "auth" and "OPENAI_API_KEY" in info.value.message


def test_env_key_and_base_url_are_honoured(server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    provider = OpenAICompatProvider(max_retries=0, max_tokens=300)
    server.push(Reply(text="ok"))
    assert provider.generate([user("hi")], []).text == "ok"
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    body = server.bodies()[0]
    assert body["max_completion_tokens"] == 300 and "max_tokens" not in body
    assert provider.name == "openai" and not provider.supports_native_thinking
    assert SECRET not in repr(provider)


def test_a_keyless_base_url_gets_max_tokens(server, monkeypatch) -> None:
    """A local server behind OPENAI_BASE_URL (no key): llama-cpp-python ignores
    max_completion_tokens, so the bound goes as max_tokens, which every local server reads."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    provider = OpenAICompatProvider(max_retries=0, max_tokens=64)
    server.push(Reply(text="ok"))
    assert provider.generate([user("hi")], []).text == "ok"
    body = server.bodies("/chat/completions")[0]
    assert body["max_tokens"] == 64 and "max_completion_tokens" not in body


def test_local_preset_needs_no_key_and_picks_the_served_model(server) -> None:
    provider = OpenAICompatProvider(preset="ollama", base_url=server.url + "/v1", max_tokens=50, max_retries=0)
    assert provider.name == "ollama" and provider.model == ""
    server.push(Reply(text="hi"))
    result = provider.generate([user("hi")], [])
    assert provider.model == "qwen3:8b" == result.model
    body = server.bodies("/chat/completions")[0]
    assert body["model"] == "qwen3:8b" and body["max_tokens"] == 50
    assert server.requests[0].path == "/v1/models"


def test_local_preset_with_no_served_model_is_a_clear_error(monkeypatch) -> None:
    with MockOpenAI(models=[]) as empty:
        provider = OpenAICompatProvider(preset="vllm", base_url=empty.url + "/v1", max_retries=0)
        with pytest.raises(ProviderError) as info:
            provider.generate([user("hi")], [])
    assert "model=" in info.value.message and info.value.provider == "vllm"


def test_preset_defaults() -> None:
    assert OpenAICompatProvider(preset="ollama").base_url == "http://localhost:11434/v1"
    assert OpenAICompatProvider(preset="vllm").base_url == "http://localhost:8000/v1"
    with pytest.raises(ValueError, match="preset"):
        OpenAICompatProvider(preset="nope")


def test_connection_refused_is_a_connection_error() -> None:
    provider = OpenAICompatProvider("m", preset="vllm", base_url="http://127.0.0.1:9/v1", max_retries=0)
    with pytest.raises(ProviderError) as info:
        provider.generate([user("hi")], [], timeout_s=5)
    assert info.value.kind == "connection"
