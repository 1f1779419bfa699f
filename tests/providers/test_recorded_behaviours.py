"""Stream behaviours shown on recorded real streams, some changed the way networks change them.

Each test starts from a recording in ``tests/providers/recorded`` (see ``replay.py``);
where a case needs a variant (a body cut short, a chunk of another shape), the test
derives it from the recorded bytes and says how.
"""

from __future__ import annotations

import json

import pytest

from jupyter_brain.providers.base import ProviderError, Usage
from tests.providers.replay import recording
from tests.providers.test_recorded_streams import replay


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


# -- stream endings (item 7) -------------------------------------------------------------


def test_anthropic_message_without_the_final_blank_line_is_complete() -> None:
    rec = recording("anthropic/sdk-text-no-final-blank-line")
    body = rec.body()
    assert body.endswith(b'data: {"type":"message_stop"}')  # the SDK never delivers this event
    _, result = replay(rec)
    assert (result.text, result.stop_reason) == ("Hello there!", "end_turn")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (11, 6)


def test_anthropic_stream_cut_before_the_stop_reason_is_a_connection_error() -> None:
    rec = recording("anthropic/sdk-text-no-final-blank-line")
    body = rec.body()
    cut = body[: body.index(b"event: message_delta")]  # the line died after the last block
    with pytest.raises(ProviderError) as info:
        replay(rec, cut)
    assert info.value.kind == "connection" and info.value.retryable


def test_a_second_message_start_replaces_the_first_attempt() -> None:
    events, result = replay(recording("anthropic/vercel-spliced-message-start"))
    assert [c.id for c in result.tool_calls] == ["toolu_second"]
    assert result.tool_calls[0].arguments == {"value": "Sparkle Day"} and not result.tool_calls[0].truncated
    assert [(b.text, b.signature) for b in result.thinking] == [("Let me call the tool.", "sig-second")]
    # the first attempt was streamed before the gateway switched; the result holds none of it
    assert "toolu_first" in [e.tool_call_id for e in events if e.type == "tool_call_start"]


def test_chat_stream_without_done_marker_is_complete() -> None:
    rec = recording("openai/sdk-text")
    body = rec.body()
    assert body.endswith(b"data: [DONE]\n\n")
    _, with_done = replay(rec)
    _, without = replay(rec, body[: -len(b"data: [DONE]\n\n")])
    assert without.model_dump() == with_done.model_dump()
    assert not without.usage.estimated


def test_chat_stream_whose_last_chunk_lacks_its_blank_line_keeps_the_answer() -> None:
    """The usage chunk that lost its terminating blank line is never decoded: the answer
    stands (its finish chunk came before) and the usage is estimated instead."""
    rec = recording("openai/sdk-text")
    body = rec.body()[: -len(b"\n\ndata: [DONE]\n\n")]
    _, result = replay(rec, body)
    assert result.text.startswith("I'm unable to provide real-time weather updates")
    assert result.stop_reason == "end_turn"
    assert result.usage.estimated and result.usage.output_tokens > 0


# -- truncation and refusal (items 3/4, provider side) -----------------------------------


def test_anthropic_tool_call_cut_by_max_tokens_is_marked_truncated() -> None:
    _, result = replay(recording("anthropic/sdk-max-tokens-inside-tool-call"))
    assert result.stop_reason == "max_tokens"
    (call,) = result.tool_calls
    assert call.truncated and call.arguments == {}
    assert call.raw_arguments is not None and call.raw_arguments.endswith('\n"Filing taxes')
    assert result.to_message()["tool_calls"][0]["arguments"] == {}


def test_chat_tool_call_cut_by_length_is_marked_truncated() -> None:
    """The recorded parallel-call stream, cut inside the second call's arguments and ended
    with the finish chunk a server sends at max_tokens."""
    rec = recording("openai/sdk-parallel-tool-calls")
    frames = rec.body().split(b"\n\n")
    cut = next(i for i, f in enumerate(frames) if b'"arguments":"cker' in f) + 1
    last = json.loads(frames[cut - 1][len(b"data: "):])
    last["choices"] = [{"index": 0, "delta": {}, "finish_reason": "length"}]
    body = b"\n\n".join(frames[:cut]) + b"\n\ndata: " + json.dumps(last).encode() + b"\n\n"
    _, result = replay(rec, body)
    assert result.stop_reason == "max_tokens"
    first, second = result.tool_calls
    assert not first.truncated and first.arguments == {"city": "Edinburgh", "country": "GB", "units": "c"}
    assert second.truncated and second.arguments == {} and second.raw_arguments == '{"ticker"'


def test_openai_refusal_is_not_answer_text() -> None:
    events, result = replay(recording("openai/sdk-refusal"))
    assert result.stop_reason == "refusal"
    assert result.refusal == "I'm sorry, I can't assist with that request."
    assert result.text == "" and not [e for e in events if e.type == "text"]


def test_anthropic_refusal_after_thinking_keeps_the_partial_text_apart() -> None:
    _, result = replay(recording("anthropic/sdk-thinking-then-refusal"))
    assert result.stop_reason == "refusal" and result.text == "Hi"
    assert result.refusal and "declined" in result.refusal
    assert result.thinking[0].signature


# -- content shapes (item 5) --------------------------------------------------------------


def test_magistral_content_parts_become_thinking_then_text() -> None:
    events, result = replay(recording("mistral/vercel-magistral-content-parts"))
    kinds = [e.type for e in events]
    assert kinds.index("thinking_end") < kinds.index("text")
    assert result.thinking[0].text == "The user is asking for 2+2. This is basic arithmetic. 2+2=4."
    assert result.text == "2 + 2 = 4"


@pytest.mark.parametrize(
    "content",
    [42, ["a bare string where a part should be"], {"type": "text", "text": "an object, not a list"}],
    ids=["number", "list-of-strings", "object"],
)
def test_unexpected_content_shape_is_a_provider_error_naming_the_server(content: object) -> None:
    """The recorded Magistral stream with its first chunk's ``content`` replaced."""
    rec = recording("mistral/vercel-magistral-content-parts")
    lines = rec.data_path.read_text().splitlines()
    first = json.loads(lines[0])
    first["choices"][0]["delta"]["content"] = content
    body = "".join(f"data: {line}\n\n" for line in [json.dumps(first), *lines[1:]]).encode()
    with pytest.raises(ProviderError) as info:
        replay(rec, body)
    assert info.value.kind == "stream"
    assert "http://127.0.0.1:" in info.value.message and "content" in info.value.message


# -- usage (item 6) -----------------------------------------------------------------------


def test_xai_reasoning_outside_completion_tokens_is_counted() -> None:
    _, result = replay(recording("xai/vercel-grok-3-mini-text"))
    # prompt 12 (11 cached), completion 1, reasoning 290, total 303
    assert (result.usage.input_tokens, result.usage.cache_read_tokens) == (1, 11)
    assert result.usage.output_tokens == 291


@pytest.mark.parametrize(
    ("rec_id", "completion"),
    [("openai/fantasy-gpt-5-tool-call", 89), ("openai/fantasy-o4-mini-text", 84), ("deepseek/vercel-deepseek-tool-call", 83)],
)
def test_reasoning_inside_completion_tokens_is_not_counted_twice(rec_id: str, completion: int) -> None:
    _, result = replay(recording(rec_id))
    assert result.usage.output_tokens == completion


def test_a_server_that_reports_no_usage_gets_an_estimate() -> None:
    _, result = replay(recording("ollama/ask-openai-parallel-tool-calls"))
    usage = result.usage
    assert usage.estimated and usage.input_tokens > 5 and usage.output_tokens > 5
    assert (usage + Usage(input_tokens=1)).estimated and (Usage() + usage).estimated
    assert not (Usage(input_tokens=1) + Usage(output_tokens=1)).estimated


def test_estimated_is_not_a_token_field() -> None:
    """The harness sums ``Usage.model_fields`` as token counters; the flag stays out of them."""
    assert "estimated" not in Usage.model_fields
    assert Usage(input_tokens=3, estimated=True).model_dump() == {
        "input_tokens": 3, "output_tokens": 0, "cache_read_tokens": 0, "cache_creation_tokens": 0,
    }
    assert Usage(**dict.fromkeys(Usage.model_fields, 0)).estimated is False

