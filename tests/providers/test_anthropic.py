"""AnthropicProvider with the real ``anthropic`` SDK against the mock Messages API."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from mock_servers import Count, HttpError, MockAnthropic, Reply, ToolUse

from jupyter_brain.providers.anthropic import DEFAULT_MODEL, AnthropicProvider, to_wire
from jupyter_brain.providers.base import ProviderError, ProviderResult, StreamEvent
from jupyter_brain.providers.sdk_support import estimate_tokens

SECRET = "sk-ant-test-not-a-real-key"
ADD_TOOL = {
    "name": "add",
    "description": "Add two integers.",
    "input_schema": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}
NOTE_TOOL = {"name": "note", "description": "Remember a note.", "input_schema": {"type": "object"}}


@pytest.fixture
def server() -> Iterator[MockAnthropic]:
    with MockAnthropic() as s:
        yield s


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def provider(server: MockAnthropic) -> AnthropicProvider:
    return AnthropicProvider(api_key=SECRET, base_url=server.url, max_retries=2)


def stream(provider: AnthropicProvider, messages: list, tools: list | None = None, **kw) -> tuple[list[StreamEvent], ProviderResult]:
    events = list(provider.generate_stream(messages, tools or [], **kw))
    assert events[-1].type == "done" and events[-1].result is not None
    return events[:-1], events[-1].result


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def cache_marks(body: dict) -> int:
    return json.dumps(body).count('"cache_control"')


def test_streamed_text_arrives_as_separate_events(provider, server) -> None:
    server.push(Reply(text=["Hel", "lo, ", "world"], input_tokens=21, output_tokens=4))
    events, result = stream(provider, [user("hi")])
    assert [(e.type, e.text) for e in events] == [("text", "Hel"), ("text", "lo, "), ("text", "world")]
    assert result.text == "Hello, world"
    assert result.stop_reason == "end_turn"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (21, 4)
    assert result.model == DEFAULT_MODEL
    body = server.bodies("/v1/messages")[0]
    assert body["stream"] is True and body["model"] == DEFAULT_MODEL
    assert "thinking" not in body and body["max_tokens"] == provider.max_tokens


def test_events_are_yielded_while_the_response_is_still_streaming(provider, server) -> None:
    # The server stops after the first text delta until we release it; if the provider
    # buffered the response, no event would arrive and the server would drop the line.
    server.push(Reply(text=["first", " second"], hold_after=4))
    events = provider.generate_stream([user("hi")], [])
    first = next(events)
    assert (first.type, first.text) == ("text", "first")
    server.release.set()
    assert [e.type for e in events] == ["text", "done"]


def test_closing_the_stream_early_releases_the_connection(provider, server) -> None:
    server.push(Reply(text=["a", "b", "c"]), Reply(text="next"))
    events = provider.generate_stream([user("hi")], [])
    assert next(events).text == "a"
    events.close()  # what the harness does on interrupt
    assert provider.generate([user("again")], []).text == "next"


def test_thinking_display_is_passed_through(server) -> None:
    provider = AnthropicProvider(api_key=SECRET, base_url=server.url, thinking_display="summarized")
    params = provider.request_params([user("hi")], [], thinking_budget=3000)
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 3000, "display": "summarized"}
    assert "thinking" not in provider.request_params([user("hi")], [], thinking_budget=0)


def test_generate_returns_the_collected_result(provider, server) -> None:
    server.push(Reply(text=["a", "b"]))
    assert provider.generate([user("hi")], []).text == "ab"


def test_thinking_signature_round_trips_through_a_tool_loop(provider, server) -> None:
    server.push(
        Reply(
            thinking=["I should ", "add them."],
            signature="sig-Abc123==",
            text="Let me add.",
            tool_calls=[ToolUse("add", {"a": 2, "b": 3}, id="toolu_01")],
        ),
        Reply(text="5"),
    )
    history = [{"role": "system", "content": "You are terse."}, user("2+3?")]
    events, result = stream(provider, history, [ADD_TOOL], thinking_budget=500)

    assert [e.text for e in events if e.type == "thinking"] == ["I should ", "add them."]
    (end,) = [e for e in events if e.type == "thinking_end"]
    assert end.signature == "sig-Abc123=="
    assert [e.type for e in events].index("thinking_end") < [e.type for e in events].index("text")
    assert result.thinking[0].text == "I should add them." and result.thinking[0].signature == "sig-Abc123=="
    assert result.stop_reason == "tool_use"
    assert result.tool_calls[0].id == "toolu_01" and result.tool_calls[0].arguments == {"a": 2, "b": 3}

    first = server.bodies("/v1/messages")[0]
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 1024}  # LOW=500 raised
    assert first["max_tokens"] == provider.max_tokens + 1024

    history += [
        result.to_message(),
        {"role": "tool", "tool_call_id": "toolu_01", "name": "add", "content": "5", "is_error": False},
    ]
    _, final = stream(provider, history, [ADD_TOOL], thinking_budget=500)
    assert final.text == "5"

    second = server.bodies("/v1/messages")[1]
    assistant = second["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "I should add them.",
        "signature": "sig-Abc123==",
    }
    assert assistant["content"][1] == {"type": "text", "text": "Let me add."}
    assert assistant["content"][2] == {
        "type": "tool_use",
        "id": "toolu_01",
        "name": "add",
        "input": {"a": 2, "b": 3},
    }
    tool_turn = second["messages"][2]
    assert tool_turn["role"] == "user"
    assert tool_turn["content"][0]["type"] == "tool_result"
    assert tool_turn["content"][0]["tool_use_id"] == "toolu_01"
    assert tool_turn["content"][0]["content"] == "5"
    assert "is_error" not in tool_turn["content"][0]


def test_parallel_tool_calls_and_merged_tool_results(provider, server) -> None:
    server.push(
        Reply(
            tool_calls=[
                ToolUse("add", {"a": 1, "b": 2}, id="toolu_a", pieces=4),
                ToolUse("note", {"text": "x" * 30}, id="toolu_b", pieces=5),
            ]
        ),
        Reply(text="done"),
    )
    events, result = stream(provider, [user("go")], [ADD_TOOL, NOTE_TOOL])
    starts = [(e.index, e.tool_call_id, e.name) for e in events if e.type == "tool_call_start"]
    assert starts == [(0, "toolu_a", "add"), (1, "toolu_b", "note")]
    for index, call_id, _ in starts:
        fragments = [e.text for e in events if e.type == "tool_call_args" and e.tool_call_id == call_id]
        assert len(fragments) > 1
        assert all(e.index == index for e in events if e.type == "tool_call_args" and e.tool_call_id == call_id)
        assert json.loads("".join(fragments)) == result.tool_calls[index].arguments
    assert [c.name for c in result.tool_calls] == ["add", "note"]

    history = [
        user("go"),
        result.to_message(),
        {"role": "tool", "tool_call_id": "toolu_a", "name": "add", "content": "3", "is_error": False},
        {"role": "tool", "tool_call_id": "toolu_b", "name": "note", "content": "disk full", "is_error": True},
    ]
    stream(provider, history, [ADD_TOOL, NOTE_TOOL])
    sent = server.bodies("/v1/messages")[1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    results = sent[2]["content"]
    assert [(b["type"], b["tool_use_id"]) for b in results] == [("tool_result", "toolu_a"), ("tool_result", "toolu_b")]
    assert "is_error" not in results[0] and results[1]["is_error"] is True


def test_cache_usage_figures_are_mapped(provider, server) -> None:
    server.push(Reply(text="ok", input_tokens=12, output_tokens=7, cache_read_tokens=3000, cache_creation_tokens=250))
    _, result = stream(provider, [user("hi")])
    u = result.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_creation_tokens) == (12, 7, 3000, 250)
    assert u.total_input_tokens == 3262


def test_cache_breakpoints_and_workspace_placement(provider, server) -> None:
    server.push(Reply(text="ok"))
    history = [
        {"role": "system", "content": "You are an agent."},
        {"role": "system", "content": "Rules: be safe."},
        {"role": "system", "content": "df: DataFrame 3x2", "kind": "workspace"},
        user("first question"),
        {"role": "assistant", "content": "first answer"},
        user("second question"),
    ]
    stream(provider, history, [ADD_TOOL, NOTE_TOOL])
    body = server.bodies("/v1/messages")[0]

    assert "cache_control" not in body["tools"][0]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    # The workspace is its own cached system block after the stable ones.
    assert [b["text"] for b in body["system"]] == ["You are an agent.", "Rules: be safe.", "df: DataFrame 3x2"]
    assert "cache_control" not in body["system"][0]
    assert body["system"][1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"][2]["cache_control"] == {"type": "ephemeral"}

    last = body["messages"][-1]
    assert last["role"] == "user"
    assert last["content"] == [{
        "type": "text",
        "text": "second question",
        "cache_control": {"type": "ephemeral"},
    }]
    assert cache_marks(body) == 4  # the API's maximum


def test_workspace_is_a_cached_system_block_whatever_the_history_ends_with() -> None:
    system, messages = to_wire(
        [
            {"role": "system", "content": "stable"},
            {"role": "system", "content": "ws", "kind": "workspace"},
            user("q"),
            {"role": "assistant", "content": "partial"},
        ]
    )
    assert system == [
        {"type": "text", "text": "stable", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "ws", "cache_control": {"type": "ephemeral"}},
    ]
    assert messages[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_steady_tool_loop_reads_almost_everything_from_the_cache(server) -> None:
    """With the mock's model of the prompt cache, step k+1 reads what step k wrote."""
    from prompt_cache import PromptCache

    server.prompt_cache = PromptCache(lambda text: max(1, len(text) // 4), min_tokens=1)
    provider = AnthropicProvider(api_key="k", base_url=server.url, max_retries=0)
    history = [user("q")]
    workspace = {"role": "system", "content": "w" * 8000, "kind": "workspace"}
    usages = []
    for step in range(4):
        server.push(Reply(text="", tool_calls=[ToolUse(id=f"toolu_{step}", name="add", arguments={"a": 1, "b": step})]))
        result = provider.generate([{"role": "system", "content": "sys " * 500}, workspace, *history], [ADD_TOOL])
        usages.append(result.usage)
        history += [
            {"role": "assistant", "content": "", "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in result.tool_calls]},
            {"role": "tool", "tool_call_id": result.tool_calls[0].id, "name": "add", "content": "r" * 1200, "is_error": False},
        ]
    assert usages[0].cache_read_tokens == 0 and usages[0].cache_creation_tokens > 2000
    for u in usages[1:]:
        share = u.cache_read_tokens / u.total_input_tokens
        assert share > 0.8, u
        assert u.input_tokens == 0  # everything after the last breakpoint is new and written


def test_wire_mapping_drops_unsigned_thinking_and_sanitises_foreign_tool_ids() -> None:
    _, messages = to_wire(
        [
            user("q"),
            {
                "role": "assistant",
                "content": "",
                "thinking": [{"text": "from a <think> tag"}, {"redacted": True, "data": "opaque=="}],
                "tool_calls": [{"id": "call:1/x", "name": "add", "arguments": {"a": 1, "b": 1}}],
            },
            {"role": "tool", "tool_call_id": "call:1/x", "name": "add", "content": "2", "is_error": False},
            user("and now?"),
        ]
    )
    assistant = messages[1]["content"]
    assert assistant[0] == {"type": "redacted_thinking", "data": "opaque=="}
    assert [b["type"] for b in assistant] == ["redacted_thinking", "tool_use"]  # no empty text block
    assert assistant[1]["id"] == "call_1_x"
    merged = messages[2]
    assert [b["type"] for b in merged["content"]] == ["tool_result", "text"]
    assert merged["content"][0]["tool_use_id"] == "call_1_x"


def test_redacted_thinking_is_returned_and_sent_back(provider, server) -> None:
    server.push(Reply(redacted_thinking="EncryptedBlob==", text="hi"), Reply(text="again"))
    events, result = stream(provider, [user("x")], thinking_budget=2048)
    assert result.thinking[0].redacted and result.thinking[0].data == "EncryptedBlob=="
    assert "thinking_end" in [e.type for e in events]
    stream(provider, [user("x"), result.to_message(), user("y")], thinking_budget=2048)
    assistant = server.bodies("/v1/messages")[1]["messages"][1]
    assert assistant["content"][0] == {"type": "redacted_thinking", "data": "EncryptedBlob=="}
    assert server.bodies("/v1/messages")[1]["thinking"]["budget_tokens"] == 2048


def test_rate_limit_then_success_uses_the_sdk_retry(server) -> None:
    provider = AnthropicProvider(api_key=SECRET, base_url=server.url, max_retries=2)
    server.push(HttpError(429, "slow down", headers={"retry-after": "0.05"}), Reply(text="ok"))
    _, result = stream(provider, [user("hi")])
    assert result.text == "ok"
    attempts = [r for r in server.requests if r.path == "/v1/messages"]
    assert len(attempts) == 2
    assert attempts[1].headers["x-stainless-retry-count"] == "1"


def test_overloaded_before_the_stream_raises_after_retries(server) -> None:
    provider = AnthropicProvider(api_key=SECRET, base_url=server.url, max_retries=1)
    fast = {"retry-after-ms": "10"}
    server.push(HttpError(529, "Overloaded", headers=fast), HttpError(529, "Overloaded", headers=fast))
    with pytest.raises(ProviderError) as info:
        stream(provider, [user("hi")])
    assert info.value.kind == "overloaded" and info.value.status_code == 529 and info.value.retryable
    assert "Overloaded" in str(info.value)
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("status", "kind"),
    [(400, "bad_request"), (401, "auth"), (403, "auth"), (429, "rate_limit"), (500, "server"), (503, "server")],
)
def test_http_errors_map_to_kinds(server, status: int, kind: str) -> None:
    provider = AnthropicProvider(api_key=SECRET, base_url=server.url, max_retries=0)
    server.push(HttpError(status, "nope"))
    with pytest.raises(ProviderError) as info:
        provider.generate([user("hi")], [])
    assert (info.value.kind, info.value.status_code, info.value.provider) == (kind, status, "anthropic")
    assert SECRET not in str(info.value)
    if kind == "auth":
        assert "ANTHROPIC_API_KEY" in str(info.value)


@pytest.mark.parametrize(("error_type", "kind"), [("overloaded_error", "overloaded"), ("api_error", "stream")])
def test_error_event_mid_stream_raises(provider, server, error_type: str, kind: str) -> None:
    server.push(Reply(text=["partial", " more"], error_after=4, error_type=error_type))
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        for event in provider.generate_stream([user("hi")], []):
            seen.append(event)
    assert [(e.type, e.text) for e in seen] == [("text", "partial")]
    assert info.value.kind == kind
    assert len(server.requests) == 1  # no silent retry after output was streamed


def test_dropped_connection_mid_stream_raises(provider, server) -> None:
    server.push(Reply(text=["a", "b", "c"], drop_after=5))
    with pytest.raises(ProviderError) as info:
        list(provider.generate_stream([user("hi")], []))
    assert info.value.kind == "connection" and info.value.retryable


def test_stream_ending_before_message_stop_raises(provider, server) -> None:
    server.push(Reply(text=["a", "b"], truncate_after=5))
    with pytest.raises(ProviderError) as info:
        provider.generate([user("hi")], [])
    assert info.value.kind == "connection"
    assert "message_stop" in str(info.value)


def test_read_timeout_mid_stream_raises_timeout(server) -> None:
    provider = AnthropicProvider(api_key=SECRET, base_url=server.url, max_retries=0)
    server.push(Reply(text=["a", "b"], hold_after=3))
    with pytest.raises(ProviderError) as info:
        provider.generate([user("hi")], [], timeout_s=0.3)
    assert info.value.kind == "timeout"


def test_malformed_tool_input_json_is_kept_raw(provider, server) -> None:
    raw = '{"a": 1, "b": '
    server.push(Reply(tool_calls=[ToolUse("add", raw=raw, id="toolu_bad"), ToolUse("add", {"a": 1, "b": 1})]))
    _, result = stream(provider, [user("hi")], [ADD_TOOL])
    bad, good = result.tool_calls
    assert (bad.id, bad.arguments, bad.raw_arguments) == ("toolu_bad", {}, raw)
    assert (good.arguments, good.raw_arguments) == ({"a": 1, "b": 1}, None)


def test_missing_key_is_a_clear_auth_error() -> None:
    with pytest.raises(ProviderError) as info:
        AnthropicProvider()
    assert info.value.kind == "auth"
    assert "ANTHROPIC_API_KEY" in info.value.message and "api_key=" in info.value.message


def test_env_key_and_base_url_are_honoured(server, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    provider = AnthropicProvider(model="claude-test-model", max_retries=0)
    server.push(Reply(text="ok"))
    assert provider.generate([user("hi")], []).text == "ok"
    headers = server.requests[0].headers
    assert SECRET in (headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer "))
    assert server.bodies()[0]["model"] == "claude-test-model" == provider.model


def test_key_never_appears_in_repr(provider) -> None:
    assert SECRET not in repr(provider) and SECRET not in str(provider)
    assert provider.name == "anthropic" and provider.supports_native_thinking


def test_count_tokens_uses_the_endpoint(provider, server) -> None:
    server.push(Count(4321))
    history = [{"role": "system", "content": "sys"}, user("hello")]
    assert provider.count_tokens(history, [ADD_TOOL]) == 4321
    (request,) = server.requests
    assert request.path == "/v1/messages/count_tokens"
    assert request.body["system"][0]["text"] == "sys" and request.body["tools"][0]["name"] == "add"
    assert "max_tokens" not in request.body


def test_count_tokens_falls_back_to_an_estimate(server) -> None:
    provider = AnthropicProvider(api_key=SECRET, base_url=server.url, max_retries=0)
    server.push(HttpError(404, "no count endpoint here"))
    history = [user("x" * 400)]
    estimate = provider.count_tokens(history, [ADD_TOOL])
    assert estimate == estimate_tokens(history, [ADD_TOOL]) and estimate > 100


def test_adaptive_only_model_falls_back_from_budgeted_thinking(provider, server) -> None:
    server.push(
        HttpError(400, '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive".'),
        Reply(thinking="hmm", signature="s1", text="ok"),
        Reply(text="ok again"),
    )
    _, result = stream(provider, [user("hi")], thinking_budget=4000)
    assert result.text == "ok" and result.thinking[0].signature == "s1"
    stream(provider, [user("hi")], thinking_budget=4000)
    bodies = server.bodies("/v1/messages")
    assert bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert bodies[1]["thinking"] == bodies[2]["thinking"] == {"type": "adaptive"}
    assert bodies[1]["max_tokens"] == provider.max_tokens + 4000


def test_other_bad_requests_are_not_retried_as_adaptive(provider, server) -> None:
    server.push(HttpError(400, "messages: text content blocks must be non-empty"))
    with pytest.raises(ProviderError) as info:
        provider.generate([user("hi")], [], thinking_budget=4000)
    assert info.value.kind == "bad_request" and len(server.requests) == 1


def test_mock_json_reply_parses_with_the_sdk(server) -> None:
    """The mock's non-streaming shape is what the SDK expects (guards the mock itself)."""
    import anthropic

    client = anthropic.Anthropic(api_key=SECRET, base_url=server.url, max_retries=0)
    server.push(Reply(thinking="t", signature="sig", text="hi", tool_calls=[ToolUse("add", {"a": 1, "b": 2})]))
    message = client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[0].signature == "sig" and message.content[2].input == {"a": 1, "b": 2}
    assert message.stop_reason == "tool_use"


def test_exact_input_tokens_answers_or_says_it_cannot(server) -> None:
    provider = AnthropicProvider(api_key=SECRET, base_url=server.url, max_retries=0)
    server.push(Count(777), HttpError(500, "count failed"), HttpError(404, "no count endpoint here"))
    history = [user("hello")]
    assert provider.exact_input_tokens(history, [ADD_TOOL]) == 777
    assert provider.exact_input_tokens(history, [ADD_TOOL]) is None  # a failure: no guess
    assert provider.exact_input_tokens(history, [ADD_TOOL]) is None  # 404: the gateway lacks it
    assert provider.exact_input_tokens(history, [ADD_TOOL]) is None  # ... and is not asked again
    assert len(server.bodies("/count_tokens")) == 3
