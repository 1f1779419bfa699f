"""Every recorded real stream, replayed byte for byte through the real SDK into our provider.

One test case per file in ``tests/providers/recorded``: the provider's result must match
what the sidecar's ``expect`` says a reader of the events finds (text, thinking, tool
calls with arguments, usage, stop reason, refusal), and the streamed events must add up
to the result. Behaviours that need a stream changed or a second request are in
``test_recorded_behaviours.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_brain.providers.anthropic import AnthropicProvider
from jupyter_brain.providers.anthropic_stream import REFUSAL_NOTE
from jupyter_brain.providers.base import ProviderError, ProviderResult, StreamEvent
from jupyter_brain.providers.openai_compat import OpenAICompatProvider
from tests.providers.replay import Body, Recording, ReplayServer, recordings

ALL = recordings()
QUESTION = [{"role": "user", "content": "What's the weather in Florence, Italy?"}]
WEATHER = {
    "name": "weather",
    "description": "Get weather information for a location",
    "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}},
}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def replay(rec: Recording, body: bytes | None = None) -> tuple[list[StreamEvent], ProviderResult]:
    """Serve the recording once and stream it through the matching provider."""
    anthropic = rec.protocol == "anthropic"
    with ReplayServer(anthropic=anthropic) as server:
        server.push(Body(rec.body() if body is None else body))
        provider: Any = (
            AnthropicProvider("claude-recorded", api_key="sk-ant-replay", base_url=server.url, max_retries=0)
            if anthropic
            else OpenAICompatProvider("recorded-model", api_key="sk-replay", base_url=server.url + "/v1", max_retries=0)
        )
        events = list(provider.generate_stream(QUESTION, [WEATHER], timeout_s=30))
    assert events[-1].type == "done" and events[-1].result is not None
    return events[:-1], events[-1].result


def matches(actual: str, expected: Any) -> bool:
    if isinstance(expected, str):
        return actual == expected
    return len(actual) == expected["len"] and actual.startswith(expected["start"]) and actual.endswith(expected["end"])


@pytest.mark.parametrize("rec", ALL, ids=[r.id for r in ALL])
def test_recorded_stream(rec: Recording) -> None:
    expect = rec.expect
    if "error_kind" in expect:
        with pytest.raises(ProviderError) as info:
            replay(rec)
        assert info.value.kind == expect["error_kind"], str(info.value)
        return
    events, result = replay(rec)

    assert matches(result.text, expect["text"]), result.text[:200]
    assert result.stop_reason == expect["stop_reason"]
    assert len(result.thinking) == len(expect["thinking"])
    for block, want in zip(result.thinking, expect["thinking"], strict=True):
        if want.get("redacted"):
            assert block.redacted and block.data is not None and len(block.data) == want["data_len"]
        else:
            assert matches(block.text, want["text"]), block.text[:200]
            assert bool(block.signature) == want.get("signed", False)
    calls = [
        {"name": c.name, "arguments": c.arguments, **({"truncated": True} if c.truncated else {})}
        for c in result.tool_calls
    ]
    assert calls == [{k: v for k, v in c.items() if k != "raw_arguments_start"} for c in expect["tool_calls"]]
    for call, want in zip(result.tool_calls, expect["tool_calls"], strict=True):
        if want.get("truncated"):
            assert call.raw_arguments is not None
            assert call.raw_arguments.startswith(want.get("raw_arguments_start", ""))
        assert call.id

    if expect["usage"] == "estimated":
        assert result.usage.estimated
        assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    else:
        assert not result.usage.estimated
        assert result.usage.model_dump() == expect["usage"]
    if "refusal" in expect:
        assert result.refusal == (REFUSAL_NOTE if expect["refusal"] == "<note>" else expect["refusal"])
    else:
        assert result.refusal is None

    assert_events_add_up(rec, events, result)


def assert_events_add_up(rec: Recording, events: list[StreamEvent], result: ProviderResult) -> None:
    """What a view shows while streaming is what the result holds at the end."""
    if "spliced" in rec.id:  # the first attempt's deltas were shown before the splice
        return
    assert "".join(e.text for e in events if e.type == "text") == result.text
    readable = [b.text for b in result.thinking if not b.redacted]
    assert "".join(e.text for e in events if e.type == "thinking") == "".join(readable)
    assert sum(e.type == "thinking_end" for e in events) == len(result.thinking)
    starts = [e.tool_call_id for e in events if e.type == "tool_call_start"]
    assert starts == [c.id for c in result.tool_calls]
    for call in result.tool_calls:
        fragments = "".join(e.text for e in events if e.type == "tool_call_args" and e.tool_call_id == call.id)
        assert fragments == (call.raw_arguments if call.raw_arguments is not None else fragments)


def test_every_recording_says_where_it_came_from() -> None:
    assert len(ALL) >= 40
    for rec in ALL:
        source = rec.side["source"]
        assert rec.side.get("origin"), rec.id
        published = "repository" in source and "path" in source and len(source.get("commit", "")) == 40
        # or captured here from a real server, named with its version and the model's
        captured = bool(source.get("captured_by") and source.get("server") and source.get("model"))
        assert published or "url" in source or captured, rec.id
        assert rec.side["framing"] in ("sse", "jsonl") and rec.protocol in ("anthropic", "chat_completions")


def test_the_recordings_cover_the_servers_the_issue_names() -> None:
    vendors = {r.data_path.parent.name for r in ALL}
    assert {"anthropic", "openai", "deepseek", "mistral", "xai", "groq", "ollama", "vllm", "llama_cpp"} <= vendors
