"""ThinkingProcessor: each strategy compresses a valid history, keeps the planted facts as
insights, leaves signed thinking untouched; a failed thinking model falls back."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.context import TokenCounter
from jupyter_brain.agent.history import history_problems, signatures
from jupyter_brain.agent.thinking_phase import THINKING_PREFIX, ThinkingProcessor
from jupyter_brain.agent.thinking_phase.state import parse, salient_segments
from jupyter_brain.providers.scripted import ScriptedProvider

ROWS = " ".join(f"row_{i}={i * 7919 % 10007};" for i in range(120))


def _history(steps: int = 12) -> list[dict]:
    msgs: list[dict] = [{"role": "user", "content": "Go through the parts and note audit codes."}]
    for i in range(steps):
        call = {"id": f"c{i}", "name": "fetch", "arguments": {"part": i}}
        thinking = [{"text": f"plan {i}", "signature": f"sig{i}"}]
        msgs.append({"role": "assistant", "content": f"Fetching {i}.", "tool_calls": [call], "thinking": thinking})
        note = f"\nNote: the audit code for region{i} is AX-{4000 + i}." if i < 4 else ""
        msgs.append({"role": "tool", "tool_call_id": f"c{i}", "name": "fetch", "content": f"part {i}: {ROWS}{note}"})
    return msgs


@pytest.mark.parametrize("strategy", ["summary", "semantic", "token_budget"])
def test_each_strategy_compresses_and_keeps_facts(strategy: str) -> None:
    history = _history()
    provider = ScriptedProvider(summaries=["Summary: fetched parts.\nState: part 11 read.\nNext: fetch part 12."] * 3)
    processor = ThinkingProcessor(strategy, provider=provider, counter=TokenCounter())
    result = processor.perform_thinking(history, "<ws/>", None)
    out = result.compressed_history
    assert history_problems(out) == []
    assert out[0] is history[0]  # the user's message is never touched
    assert out[-1]["content"].startswith(THINKING_PREFIX) and out[-1]["role"] == "user"
    assert result.tokens_after < result.tokens_before / 3
    for i in range(4):
        assert f"AX-{4000 + i}" in out[-1]["content"]
        assert any(f"AX-{4000 + i}" in item for item in result.insights)
    # the latest results are still there (the model has not seen them); older ones are gone
    assert history[-1] in out
    assert not any(m.get("role") == "tool" and ROWS in str(m["content"]) for m in out[:-2])
    # signed thinking blocks are kept as they were, on the messages kept
    kept = [m for m in out if m.get("role") == "assistant"]
    assert all(m in history for m in kept) and set(signatures(out)) <= set(signatures(history))
    if strategy == "token_budget":
        assert result.model_calls == 0 and result.thinking_tokens == 0 and not provider.calls
    else:
        assert result.model_calls == 1 and result.thinking_tokens > 0
        assert result.next_actions == "fetch part 12." and result.current_state == "part 11 read."


def test_repeated_phases_keep_one_thinking_message_and_carry_insights() -> None:
    history = _history(6)
    processor = ThinkingProcessor("token_budget", counter=TokenCounter())
    out = processor.perform_thinking(history, "", None).compressed_history
    for i in range(6, 10):
        call = {"id": f"c{i}", "name": "fetch", "arguments": {"part": i}}
        out = [*out, {"role": "assistant", "content": "", "tool_calls": [call]},
               {"role": "tool", "tool_call_id": f"c{i}", "name": "fetch", "content": ROWS}]
        out = processor.perform_thinking(out, "", None).compressed_history
        assert history_problems(out) == []
    thinking = [m for m in out if str(m.get("content", "")).startswith(THINKING_PREFIX)]
    assert len(thinking) == 1 and all(f"AX-{4000 + i}" in thinking[0]["content"] for i in range(4))


def test_failed_thinking_model_falls_back_to_the_extractive_state() -> None:
    provider = ScriptedProvider(summaries=[RuntimeError("overloaded")])
    result = ThinkingProcessor("summary", provider=provider).perform_thinking(_history(), "", None)
    assert result.fallback and "thinking model failed" in result.fallback
    assert result.model_calls == 0 and history_problems(result.compressed_history) == []
    assert "AX-4000" in result.message["content"]


def test_salient_segments_keep_statements_not_data_rows() -> None:
    text = f"{ROWS}\nNote: the audit code for North is AX-4821.\nKeyError: 'region' not in index"
    assert salient_segments(text, set()) == ["Note: the audit code for North is AX-4821.",
                                             "KeyError: 'region' not in index"]


def test_parse_reads_a_thinking_message_back() -> None:
    parsed = parse("[Thinking]\nSummary: s\nState: t\nInsights:\n- a\n- b\nNext: n")
    assert parsed == {"summary": "s", "state": "t", "insights": ["a", "b"], "next": "n"}


def test_the_model_rewrites_the_state_only_after_enough_new_output() -> None:
    provider = ScriptedProvider(summaries=[f"Summary: round {i}.\nState: s{i}.\nNext: go on." for i in range(9)])
    processor = ThinkingProcessor("summary", provider=provider, counter=TokenCounter(), rewrite_after_tokens=2_000)
    out = processor.perform_thinking(_history(2), "", None)  # the first phase always writes
    assert out.model_calls == 1 and out.summary == "round 0."
    calls = []
    history = out.compressed_history
    for i in range(2, 12):
        call = {"id": f"c{i}", "name": "fetch", "arguments": {"part": i}}
        history = [*history, {"role": "assistant", "content": "", "tool_calls": [call]},
                   {"role": "tool", "tool_call_id": f"c{i}", "name": "fetch", "content": ROWS}]
        result = processor.perform_thinking(history, "", None)
        history = result.compressed_history
        calls.append(result.model_calls)
        if not result.model_calls:  # carried forward: the last written summary stands
            assert result.summary.startswith("round ")
        assert history_problems(history) == []
    assert 0 < sum(calls) < len(calls)
