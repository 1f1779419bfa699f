"""Every recorded real stream, replayed byte for byte through the real SDK into our provider.

One test case per file in ``tests/providers/recorded``: the provider's result must match
what the sidecar's ``expect`` says a reader of the events finds (text, thinking, tool
calls with arguments, usage, stop reason, refusal), and the streamed events must add up
to the result. ``usage_raw`` is the usage a Chat Completions stream itself reports: it must
be what the recorded bytes say, and the provider's ``Usage`` must follow from it. A stream
a gateway spliced (a second ``message_start`` while the first message is open) first shows
the abandoned attempt (``abandoned``), then events that add up to the result; a response
that goes on in a further message after one ended (Anthropic's server tools) keeps what the
earlier messages showed, and all its events add up to the result (its text is every
message's text); ``server_tools`` are the calls the server ran itself (never tool calls of
ours), with their input and the start of their result's summary; a stream that ends in an error
(``error_kind``) shows ``text_before_error`` first. Every key of ``expect`` is read: one
this test does not check fails it. Behaviours that need a stream changed or a second
request are in ``test_recorded_behaviours.py``.
"""

from __future__ import annotations

import json
import re
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


def stream(rec: Recording, body: bytes | None = None) -> tuple[list[StreamEvent], ProviderResult | ProviderError]:
    """Serve the recording once and stream it through the matching provider: the events
    streamed before the end, and the result (or the error the stream ended with)."""
    anthropic = rec.protocol == "anthropic"
    events: list[StreamEvent] = []
    with ReplayServer(anthropic=anthropic) as server:
        server.push(Body(rec.body() if body is None else body))
        provider: Any = (
            AnthropicProvider("claude-recorded", api_key="sk-ant-replay", base_url=server.url, max_retries=0)
            if anthropic
            else OpenAICompatProvider("recorded-model", api_key="sk-replay", base_url=server.url + "/v1", max_retries=0,
                                      max_tokens=rec.side["source"].get("max_tokens"))  # the recorded request's bound
        )
        try:
            for event in provider.generate_stream(QUESTION, [WEATHER], timeout_s=30):
                events.append(event)
        except ProviderError as err:
            return events, err
    assert events[-1].type == "done" and events[-1].result is not None
    assert all(e.type != "done" for e in events[:-1])
    return events[:-1], events[-1].result


def replay(rec: Recording, body: bytes | None = None) -> tuple[list[StreamEvent], ProviderResult]:
    """Serve the recording once and stream it through the matching provider; a stream
    that ends in an error raises it."""
    events, outcome = stream(rec, body)
    if isinstance(outcome, ProviderError):
        raise outcome
    return events, outcome


def before_last_start(rec: Recording) -> tuple[list[StreamEvent], ProviderResult | ProviderError] | None:
    """The stream cut just before its last ``message_start`` (None: it has only one). It
    ends in a connection error when that start came into an open message (a gateway
    splicing in a fallback, or repeating the start), in a result when the message before
    it had ended (a server-tool response going on)."""
    body = rec.body()
    starts = [m.start() for m in re.finditer(rb"^event: message_start$", body, re.MULTILINE)]
    if rec.protocol != "anthropic" or len(starts) < 2:
        return None
    return stream(rec, body[: starts[-1]])


class Expected:
    """A sidecar's ``expect`` that notes which keys the test read: a key no test reads is
    an expectation nobody checks (``unread`` lists them; the test fails on any)."""

    def __init__(self, data: dict[str, Any], where: str = "expect") -> None:
        self.data = data
        self.where = where
        self.read: dict[str, Any] = {}

    def __contains__(self, key: str) -> bool:
        return key in self.data

    def __getitem__(self, key: str) -> Any:
        value = self.data[key]
        where = f"{self.where}.{key}"
        if isinstance(value, dict):
            value = Expected(value, where)
        elif isinstance(value, list):
            value = [Expected(v, f"{where}[{i}]") if isinstance(v, dict) else v for i, v in enumerate(value)]
        self.read[key] = value
        return value

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self.data else default

    def whole(self, key: str) -> Any:
        """The value as it is, compared whole (so every key in it is read)."""
        self.read[key] = None
        return self.data[key]

    def unread(self) -> list[str]:
        missing = [f"{self.where}.{key}" for key in self.data if key not in self.read]
        for value in self.read.values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, Expected):
                    missing += item.unread()
        return missing


def matches(actual: str, expected: str | Expected) -> bool:
    if isinstance(expected, str):
        return actual == expected
    return len(actual) == expected["len"] and actual.startswith(expected["start"]) and actual.endswith(expected["end"])


@pytest.mark.parametrize("rec", ALL, ids=[r.id for r in ALL])
def test_recorded_stream(rec: Recording) -> None:
    expect = Expected(rec.side["expect"])
    events, outcome = stream(rec)
    if "error_kind" in expect:
        assert isinstance(outcome, ProviderError), outcome
        assert outcome.kind == expect["error_kind"], str(outcome)
        assert "".join(e.text for e in events if e.type == "text") == expect["text_before_error"]
        assert all(e.type == "text" for e in events)
    else:
        assert isinstance(outcome, ProviderResult), repr(outcome)
        assert_result(rec, outcome, expect)
        cut = before_last_start(rec)
        shown: list[StreamEvent] = []
        if cut is not None and isinstance(cut[1], ProviderError):
            # a spliced stream: what the first attempt showed, then the attempt the result holds
            assert cut[1].kind == "connection", cut[1]  # a cut stream
            shown = cut[0]
            assert events[: len(shown)] == shown
        elif cut is not None:
            # a response that went on in a further message: nothing shown before is taken back
            assert events[: len(cut[0])] == cut[0] and len(events) > len(cut[0])
        if "abandoned" in expect:
            assert_shown(shown, expect["abandoned"])
        else:
            assert shown == []
        assert_events_add_up(events[len(shown) :], outcome)
    assert expect.unread() == [], f"{rec.id}: the sidecar expects what this test never checks"


def assert_result(rec: Recording, result: ProviderResult, expect: Expected) -> None:
    assert matches(result.text, expect["text"]), result.text[:200]
    assert result.stop_reason == expect["stop_reason"]
    # a server that sent no finish_reason (tinyq4): inferred from [DONE] and max_tokens
    assert result.stop_reason_inferred == expect.get("stop_reason_inferred", False)
    assert len(result.thinking) == len(expect["thinking"])
    for block, want in zip(result.thinking, expect["thinking"], strict=True):
        if want.get("redacted"):
            assert block.redacted and block.data is not None and len(block.data) == want["data_len"]
        else:
            assert not block.redacted
            assert matches(block.text, want["text"]), block.text[:200]
            assert bool(block.signature) == want.get("signed", False)
    assert len(result.tool_calls) == len(expect["tool_calls"])
    for call, want in zip(result.tool_calls, expect["tool_calls"], strict=True):
        assert (call.name, call.arguments) == (want["name"], want.whole("arguments"))
        assert call.truncated == want.get("truncated", False)
        if call.truncated:
            assert call.raw_arguments is not None
            assert call.raw_arguments.startswith(want["raw_arguments_start"])
        assert call.id

    usage = result.usage
    if expect["usage"] == "estimated":
        assert usage.estimated
        assert usage.input_tokens > 0 and usage.output_tokens > 0
        assert rec.protocol == "chat_completions" and rec.chat_usage() is None  # the stream reported none
    else:
        assert not usage.estimated
        assert usage.model_dump() == expect.whole("usage")
    if "usage_raw" in expect:
        raw = expect["usage_raw"]
        figures = {key: raw[key] for key in ("prompt", "completion", "total", "reasoning", "cached")}
        assert figures == rec.chat_usage()  # what the recorded stream itself reports
        # Usage's conventions: input excludes the cached part; output is everything after
        # the prompt, reasoning included wherever the server counts it (xAI: outside
        # completion_tokens, total = prompt + completion + reasoning).
        assert usage.cache_read_tokens == figures["cached"]
        assert usage.input_tokens == figures["prompt"] - figures["cached"]
        assert usage.cache_creation_tokens == 0
        assert usage.output_tokens == figures["total"] - figures["prompt"]
        assert usage.output_tokens >= max(figures["completion"], figures["reasoning"])
    if "refusal" in expect:
        assert result.refusal == (REFUSAL_NOTE if expect["refusal"] == "<note>" else expect["refusal"])
    else:
        assert result.refusal is None
    assert_server_tools(result, expect.get("server_tools", []))


def assert_server_tools(result: ProviderResult, want: list[Expected]) -> None:
    """The calls the server ran: named, with their input and result; never our tool calls."""
    assert [u.name for u in result.server_tools] == [w["name"] for w in want]
    for use, expected in zip(result.server_tools, want, strict=True):
        assert use.input == expected.whole("input")
        assert use.summary.startswith(expected["summary_start"]), use.summary[:200]
        assert use.error is None and use.id.startswith("srvtoolu_")
    assert not {u.id for u in result.server_tools} & {c.id for c in result.tool_calls}
    if result.server_tools:  # their blocks go back in the next request as they came
        assert result.native_content is not None
        kept = [b for b in result.native_content["blocks"] if b["type"] == "server_tool_use"]
        assert [b["id"] for b in kept] == [u.id for u in result.server_tools]


def assert_shown(events: list[StreamEvent], want: Expected) -> None:
    """The events of an abandoned attempt show what the sidecar says it streamed."""
    assert "".join(e.text for e in events if e.type == "text") == want["text"]
    ends = [e for e in events if e.type == "thinking_end"]
    assert len(ends) == len(want["thinking"])
    for end, block in zip(ends, want["thinking"], strict=True):
        assert "".join(e.text for e in events if e.type == "thinking" and e.index == end.index) == block["text"]
        assert bool(end.signature) == block["signed"]
    starts = [e for e in events if e.type == "tool_call_start"]
    assert len(starts) == len(want["tool_calls"])
    for start, call in zip(starts, want["tool_calls"], strict=True):
        fragments = "".join(e.text for e in events if e.type == "tool_call_args" and e.tool_call_id == start.tool_call_id)
        assert (start.name, fragments) == (call["name"], call["streamed_arguments"])


def assert_events_add_up(events: list[StreamEvent], result: ProviderResult) -> None:
    """What a view shows while streaming is what the result holds at the end."""
    assert "".join(e.text for e in events if e.type == "text") == result.text
    for index, block in enumerate(result.thinking):
        streamed = "".join(e.text for e in events if e.type == "thinking" and e.index == index)
        assert streamed == ("" if block.redacted else block.text), index
    ends = [e for e in events if e.type == "thinking_end"]
    assert [(e.index, e.signature) for e in ends] == [(i, b.signature) for i, b in enumerate(result.thinking)]
    starts = [e for e in events if e.type == "tool_call_start"]
    assert [(e.tool_call_id, e.name) for e in starts] == [(c.id, c.name) for c in result.tool_calls]
    for call in result.tool_calls:
        fragments = "".join(e.text for e in events if e.type == "tool_call_args" and e.tool_call_id == call.id)
        if call.raw_arguments is not None:  # cut off or not JSON: shown as it came
            assert fragments == call.raw_arguments
        else:  # the streamed JSON is the call's arguments (none streamed: no arguments)
            assert (json.loads(fragments) if fragments else {}) == call.arguments, fragments


def test_expected_lists_the_keys_nobody_read() -> None:
    expect = Expected({"text": "a", "usage_raw": {"prompt": 1, "cached": 0}, "tool_calls": [{"name": "f", "x": 1}]})
    assert expect["text"] == "a" and expect["usage_raw"]["prompt"] == 1 and expect["tool_calls"][0]["name"] == "f"
    assert expect.unread() == ["expect.usage_raw.cached", "expect.tool_calls[0].x"]
    assert Expected({"usage": {"input_tokens": 1}}).unread() == ["expect.usage"]


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
        assert set(rec.side) <= {"source", "origin", "protocol", "framing", "notes", "expect"}, rec.id


def test_the_recordings_cover_the_servers_the_issue_names() -> None:
    vendors = {r.data_path.parent.name for r in ALL}
    assert {"anthropic", "openai", "deepseek", "mistral", "xai", "groq", "ollama", "vllm", "llama_cpp", "tinyq4"} <= vendors
