"""The shared compaction machinery, through TokenBudget (the budget pass alone): what goes
first, what always stays, the calibrated budget, and a property test over every strategy."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_brain.agent.context.compaction import CLEARED_PREFIX, OMITTED_NOTE
from jupyter_brain.agent.context.compactors import (
    SemanticRelevance,
    SlidingWindowSummary,
    TokenBudget,
    compaction_strategy,
)
from jupyter_brain.agent.history import turn_start, units, validate_history
from jupyter_brain.foundation.tokens import TokenCounter

from .histories import Ids, assistant, check, failing_summarizer, fake_summarizer, filler, make_history, tool_unit

# --------------------------------------------------------------------------- the budget pass

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


# --------------------------------------------------------------------------- calibration

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
