"""ScriptedProvider: the deterministic offline model."""

from __future__ import annotations

import json

import pytest

from jupyter_brain.providers.base import (
    LLMProvider,
    ProviderError,
    ProviderResult,
    StreamEvent,
    ThinkingBlock,
    ToolCall,
    Usage,
    collect_stream,
    split_system,
)
from jupyter_brain.providers.scripted import DEFAULT_REFLECTION, ScriptedProvider

USER = [{"role": "user", "content": "hello there"}]
REFLECT = [{"role": "system", "content": "reflect", "kind": "reflection"}, {"role": "user", "content": "how?"}]


def test_is_an_llm_provider():
    p = ScriptedProvider(["x"])
    assert isinstance(p, LLMProvider)
    assert p.name == "scripted" and p.model == "scripted"
    assert ScriptedProvider(model="fake-1").model == "fake-1"
    assert "responses=1" in repr(p)


def test_string_response():
    r = ScriptedProvider(["The answer is 42."]).generate(USER, [])
    assert r.text == "The answer is 42." and r.thinking == [] and r.tool_calls == []
    assert r.stop_reason == "end_turn" and r.model == "scripted"


def test_provider_result_passes_through_unchanged():
    given = ProviderResult(text="x", usage=Usage(input_tokens=3), stop_reason="max_tokens")
    assert ScriptedProvider([given]).generate(USER, []) is given


def test_dict_response_with_tool_calls_thinking_usage():
    p = ScriptedProvider([{
        "text": "Let me check.",
        "thinking": "need the file",
        "tool_calls": [{"name": "read", "arguments": {"path": "a"}}, {"id": "mine", "name": "ls"}],
        "usage": {"input_tokens": 7, "output_tokens": 3, "cache_read_tokens": 2},
    }])
    r = p.generate(USER, [])
    assert r.text == "Let me check."
    assert r.thinking == [ThinkingBlock(text="need the file")]
    assert r.tool_calls[0].name == "read" and r.tool_calls[0].arguments == {"path": "a"}
    assert r.tool_calls[0].id.startswith("call_")
    assert r.tool_calls[1] == ToolCall(id="mine", name="ls", arguments={})
    assert r.stop_reason == "tool_use"
    assert r.usage == Usage(input_tokens=7, output_tokens=3, cache_read_tokens=2)


def test_generated_call_ids_are_unique():
    p = ScriptedProvider([{"tool_calls": [{"name": "a"}, {"name": "b"}]}, {"tool_calls": [{"name": "c"}]}])
    ids = [c.id for c in p.generate(USER, []).tool_calls] + [c.id for c in p.generate(USER, []).tool_calls]
    assert len(set(ids)) == 3


def test_thinking_blocks_as_dicts_and_signature():
    r = ScriptedProvider([{"text": "a", "thinking": [{"text": "t1", "signature": "sig"}, "t2"]}]).generate(USER, [])
    assert r.thinking == [ThinkingBlock(text="t1", signature="sig"), ThinkingBlock(text="t2")]


def test_raw_arguments_and_stop_reason():
    r = ScriptedProvider([{"tool_calls": [{"name": "t", "raw_arguments": '{"a": 1,'}], "stop_reason": "max_tokens"}]).generate(USER, [])
    assert r.tool_calls[0].raw_arguments == '{"a": 1,' and r.stop_reason == "max_tokens"


def test_callable_response_sees_messages_and_tools():
    seen = []

    def reply(messages, tools):
        seen.append((messages, tools))
        return f"you said: {messages[-1]['content']}"

    tools = [{"name": "t", "description": "", "input_schema": {}}]
    r = ScriptedProvider([reply]).generate(USER, tools)
    assert r.text == "you said: hello there"
    assert seen == [(USER, tools)]


def test_callable_can_return_dict_or_result():
    p = ScriptedProvider([lambda m, t: {"text": "d"}, lambda m, t: ProviderResult(text="r")])
    assert p.generate(USER, []).text == "d"
    assert p.generate(USER, []).text == "r"


@pytest.mark.parametrize(
    ("text", "answer", "thinking"),
    [
        ("<think>plan it</think>The answer.", "The answer.", ["plan it"]),
        ("<think>\n a \n</think>\n\nB", "B", ["a"]),
        ("<think>one</think>x<think>two</think>y", "xy", ["one", "two"]),
        ("<think>never closed", "", ["never closed"]),
        ("no tags", "no tags", []),
    ],
)
def test_think_tags_become_thinking(text, answer, thinking):
    r = ScriptedProvider([text]).generate(USER, [])
    assert r.text == answer
    assert [b.text for b in r.thinking] == thinking


def test_think_tags_added_to_explicit_thinking():
    r = ScriptedProvider([{"text": "<think>b</think>c", "thinking": "a"}]).generate(USER, [])
    assert [b.text for b in r.thinking] == ["a", "b"] and r.text == "c"


def test_usage_is_counted_with_the_real_tokenizer():
    from jupyter_brain.agent.context import TokenCounter

    counter = TokenCounter()
    request = [{"role": "user", "content": "Which month had the largest revenue drop?"}]
    p = ScriptedProvider(["March, by 12 percent."])
    r = p.generate(request, [])
    assert r.usage.input_tokens == counter.count_request(request, []) > 0
    assert r.usage.output_tokens == counter.count_text("March, by 12 percent.") == 7
    assert r.usage.cache_read_tokens == 0
    assert ScriptedProvider([""]).generate([], []).usage.output_tokens == 1
    assert p.count_tokens(request) == counter.count_request(request, [])


def test_usage_estimate_counts_thinking_text():
    from jupyter_brain.agent.context import TokenCounter

    thought = "First the monthly totals, then the differences between months. " * 5
    a = ScriptedProvider([{"text": "", "thinking": thought}]).generate(USER, []).usage.output_tokens
    b = ScriptedProvider([{"text": "", "thinking": [{"text": thought, "signature": "s"}]}]).generate(USER, []).usage.output_tokens
    assert a == b == TokenCounter().count_text(thought) > 50


# ── errors ───────────────────────────────────────────────────────────────────


def test_error_response():
    p = ScriptedProvider([{"error": {"message": "slow down", "kind": "rate_limit", "status_code": 429}}, "after"])
    with pytest.raises(ProviderError) as err:
        p.generate(USER, [])
    e = err.value
    assert (e.kind, e.status_code, e.provider, e.message) == ("rate_limit", 429, "scripted", "slow down")
    assert str(e) == "scripted rate_limit error (HTTP 429): slow down"
    assert p.generate(USER, []).text == "after"  # the error used up its slot


def test_error_as_string_and_exception():
    p = ScriptedProvider([{"error": "broken"}, {"error": KeyError("k")}, TimeoutError("t")])
    with pytest.raises(ProviderError, match="broken"):
        p.generate(USER, [])
    with pytest.raises(KeyError):
        p.generate(USER, [])
    with pytest.raises(TimeoutError):
        p.generate(USER, [])


def test_script_exhausted_clear_message():
    p = ScriptedProvider(["one"])
    p.generate(USER, [])
    with pytest.raises(ProviderError) as err:
        p.generate(USER, [])
    assert "no response left" in str(err.value) and "had 1" in str(err.value)
    assert err.value.provider == "scripted"


def test_empty_script_exhausted_immediately():
    with pytest.raises(ProviderError, match="had 0"):
        ScriptedProvider().generate(USER, [])


def test_bad_response_type():
    with pytest.raises(TypeError, match="int"):
        ScriptedProvider([42]).generate(USER, [])


def test_repeat_cycles():
    p = ScriptedProvider(["a", "b"], repeat=True)
    assert [p.generate(USER, []).text for _ in range(5)] == ["a", "b", "a", "b", "a"]


def test_calls_are_recorded():
    p = ScriptedProvider(["a"])
    p.generate(USER, [{"name": "t"}])
    (c,) = p.calls
    assert c["messages"] == USER and c["tools"] == [{"name": "t"}] and c["reflection"] is False


def test_recorded_messages_are_a_snapshot():
    p = ScriptedProvider(["a", "b"])
    msgs = list(USER)
    p.generate(msgs, [])
    msgs.append({"role": "assistant", "content": "a"})
    assert p.calls[0]["messages"] == USER


# ── reflection queue ─────────────────────────────────────────────────────────


def test_reflection_requests_use_default_without_shifting_script():
    p = ScriptedProvider(["main-1", "main-2"])
    assert p.generate(USER, []).text == "main-1"
    assert p.generate(REFLECT, []).text == DEFAULT_REFLECTION
    assert p.generate(REFLECT, []).text == DEFAULT_REFLECTION
    assert p.generate(USER, []).text == "main-2"
    assert [c["reflection"] for c in p.calls] == [False, True, True, False]


def test_reflection_queue_then_default():
    p = ScriptedProvider(["main"], reflections=["r1", {"text": "r2"}, lambda m, t: "r3"])
    assert [p.generate(REFLECT, []).text for _ in range(4)] == ["r1", "r2", "r3", DEFAULT_REFLECTION]
    assert p.generate(USER, []).text == "main"


def test_reflection_queue_error():
    p = ScriptedProvider([], reflections=[{"error": "reflection down"}])
    with pytest.raises(ProviderError):
        p.generate(REFLECT, [])


def test_default_reflection_has_confidence():
    assert "Confidence:" in DEFAULT_REFLECTION


# ── streaming ────────────────────────────────────────────────────────────────


def test_stream_chunks_concatenate_to_text():
    text = "  Hello,  world!\nThis is\ta test.  "
    for chunk_words in (1, 2, 5, 100):
        events = list(ScriptedProvider([text], chunk_words=chunk_words).generate_stream(USER, []))
        chunks = [e.text for e in events if e.type == "text"]
        assert "".join(chunks) == text
        assert events[-1].type == "done" and events[-1].result.text == text
    assert len([e for e in ScriptedProvider([text]).generate_stream(USER, []) if e.type == "text"]) > 3


def test_stream_event_order_thinking_text_tools_done():
    p = ScriptedProvider([{
        "text": "<think>a b</think>answer here",
        "thinking": [{"text": "first", "signature": "S1"}],
        "tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "x"}},
                       {"id": "c2", "name": "bad", "raw_arguments": "{oops"}],
    }])
    events = list(p.generate_stream(USER, []))
    types = [e.type for e in events]
    assert types == [
        "thinking", "thinking_end", "thinking", "thinking", "thinking_end",
        "text", "text",
        "tool_call_start", "tool_call_args", "tool_call_start", "tool_call_args",
        "done",
    ]
    assert events[1].signature == "S1"
    assert "".join(e.text for e in events[2:4]) == "a b"
    starts = [e for e in events if e.type == "tool_call_start"]
    assert [(e.index, e.tool_call_id, e.name) for e in starts] == [(0, "c1", "read"), (1, "c2", "bad")]
    args = [e for e in events if e.type == "tool_call_args"]
    assert json.loads(args[0].text) == {"path": "x"} and args[1].text == "{oops"
    assert args[0].tool_call_id == "c1"
    done = events[-1].result
    assert done.text == "answer here" and [b.text for b in done.thinking] == ["first", "a b"]


def test_collect_stream_gives_the_same_result_as_generate():
    script = [{"text": "<think>t</think>x y z", "tool_calls": [{"id": "1", "name": "n", "arguments": {"a": 1}}]}]
    streamed = collect_stream(ScriptedProvider(script).generate_stream(USER, []))
    direct = ScriptedProvider(script).generate(USER, [])
    assert streamed == direct


def test_stream_of_an_error_raises():
    p = ScriptedProvider([{"error": "x"}])
    with pytest.raises(ProviderError):
        list(p.generate_stream(USER, []))


def test_collect_stream_without_done():
    with pytest.raises(ProviderError, match="without a final result"):
        collect_stream(iter([StreamEvent(type="text", text="a")]))


# ── base helpers ─────────────────────────────────────────────────────────────


def test_to_message():
    r = ProviderResult(
        text="t",
        thinking=[ThinkingBlock(text="th", signature="sg")],
        tool_calls=[ToolCall(id="1", name="n", arguments={"a": 1})],
    )
    assert r.to_message() == {
        "role": "assistant",
        "content": "t",
        "thinking": [{"text": "th", "signature": "sg"}],
        "tool_calls": [{"id": "1", "name": "n", "arguments": {"a": 1}}],
    }
    assert ProviderResult(text="x").to_message() == {"role": "assistant", "content": "x"}


def test_split_system():
    msgs = [{"role": "system", "content": "a"}, {"role": "user", "content": "u"},
            {"role": "system", "content": "b", "kind": "workspace"}]
    assert split_system(msgs) == ("a\n\nb", [{"role": "user", "content": "u"}])
