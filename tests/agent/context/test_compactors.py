"""The strategies: sliding-window summary, semantic relevance, and the registry by name."""

from __future__ import annotations

import copy

import pytest

from jupyter_brain.agent.context.compaction import OMITTED_NOTE, SUMMARY_HEADER
from jupyter_brain.agent.context.compactors import (
    SemanticRelevance,
    SlidingWindowSummary,
    TokenBudget,
    compaction_strategy,
)
from jupyter_brain.agent.history import units

from .histories import check, failing_summarizer, fake_summarizer, make_history

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


# --------------------------------------------------------------------------- registry

def test_factory_names_and_aliases() -> None:
    for name, cls in [("summary", SlidingWindowSummary), ("sliding", SlidingWindowSummary),
                      ("sliding_window", SlidingWindowSummary), ("Sliding-Window", SlidingWindowSummary),
                      ("token_budget", TokenBudget), ("budget", TokenBudget), ("semantic", SemanticRelevance),
                      ("relevance", SemanticRelevance), ("bm25", SemanticRelevance)]:
        assert isinstance(compaction_strategy(name), cls)
    assert compaction_strategy("summary", keep_recent=2).keep_recent == 2
    with pytest.raises(ValueError, match=r"summary.*token_budget.*semantic"):
        compaction_strategy("magic")
