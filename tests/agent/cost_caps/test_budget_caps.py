"""Budget caps stop a turn *before* the model call that could cross them (issue #24).

The most a call could cost is its counted input plus its output allowance (the
provider's ``max_tokens``) at the model's price; a call whose most would take the turn,
the session or a shared cap over is not made. Side calls (reflection, thinking phase,
compaction summary) are checked and counted the same way.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from priced_providers import SONNET_IN, SONNET_OUT, MustNotCall, Priced

from jupyter_brain.agent.cost_caps import BudgetCaps, SharedBudget, estimate_call
from jupyter_brain.agent.cost_caps.wording import suggest
from jupyter_brain.agent.events import BudgetWarning, EventLog, TurnEnd
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.history import history_problems
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.foundation.tokens import TokenCounter
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.widgets.text_view import TextView, events_to_markdown


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def _call(usage: dict[str, int] | None = None) -> dict:
    return {"text": "", "tool_calls": [{"name": "lookup", "arguments": {"key": "a"}}],
            **({"usage": usage} if usage else {})}


def _usage_costing(usd: float) -> dict[str, int]:
    """A reported usage that costs ``usd`` (output tokens only)."""
    return {"input_tokens": 0, "output_tokens": round(usd / SONNET_OUT)}


def _run(provider: Any, caps: BudgetCaps, *, log: EventLog | None = None, events: list | None = None,
         history: list | None = None, **harness: Any) -> Any:
    h = AgentHarness(provider, AgentToolRegistry([lookup]), log, **harness)
    return h.run_turn("s", history or [], "look a up", budget=caps,
                      on_event=None if events is None else events.append)


# the estimate ----------------------------------------------------------------------------
def test_the_estimate_is_counted_input_plus_max_tokens_output_at_the_models_price() -> None:
    counter = TokenCounter()
    messages = [{"role": "user", "content": "How much is the premium plan?"}]
    call = estimate_call(messages, [], Priced(), counter, thinking_budget=500)
    assert call.input_tokens == counter.estimate_request(messages, [])
    assert call.output_tokens == 1500  # max_tokens + the thinking budget
    assert call.cost_usd == pytest.approx(call.input_tokens * SONNET_IN + 1500 * SONNET_OUT)
    free = estimate_call(messages, [], ScriptedProvider(), counter)  # scripted: free; no max_tokens
    assert free.cost_usd == 0.0 and free.output_tokens == 4096


@pytest.mark.parametrize(("needed", "cap", "shown"), [(0.0316, 0.03, "0.06"), (0.5, 0.1, "0.5"), (0.19, 0.05, "0.19"),
                                                      (12_345, 5_000, "13000")])
def test_the_suggested_cap_lets_the_call_go(needed: float, cap: float, shown: str) -> None:
    assert suggest(needed, cap, "tokens" if cap > 1000 else "usd") == shown


# the turn's caps -------------------------------------------------------------------------
def test_a_call_that_could_cross_the_turn_cap_is_not_made() -> None:
    log = EventLog(":memory:")
    result = _run(MustNotCall(), BudgetCaps(max_cost=0.01), log=log)  # one call may cost ~$0.016
    assert result.status == "budget" and result.cost_usd == 0
    assert "this turn's cost cap: $0.0000 spent of $0.0100" in result.text
    assert "The call was not made" in result.text and "--max-cost 0.02" in result.text
    assert history_problems(result.messages, require_final_assistant=True) == []
    (end,) = [e for e in log.events(turn_id=result.turn_id) if isinstance(e, TurnEnd)]
    assert end.status == "budget" and end.text == result.text


def test_the_turn_stops_before_the_call_that_would_cross_and_history_stays_valid() -> None:
    bot = Priced([_call(_usage_costing(0.02)), "never sent", "the next cell's answer"])
    result = _run(bot, BudgetCaps(max_cost=0.03))  # $0.02 spent; the next call may cost ~$0.016
    assert result.status == "budget" and len(bot.calls) == 1
    assert result.cost_usd == pytest.approx(0.02, abs=1e-4)
    assert "$0.0200 spent of $0.0300" in result.text
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert history_problems(result.messages, require_final_assistant=True) == []
    # The next cell continues from that history with a raised cap.
    h = AgentHarness(bot, AgentToolRegistry([lookup]), None)
    again = h.run_turn("s", result.messages, "go on", budget=BudgetCaps(max_cost=1.0))
    assert again.status == "completed" and again.text == "never sent"


def test_a_call_that_fits_under_the_cap_is_made() -> None:
    bot = Priced(["an answer"])
    result = _run(bot, BudgetCaps(max_cost=0.05, max_tokens_total=50_000))
    assert result.status == "completed" and result.text == "an answer"


def test_the_token_cap_serves_a_model_without_a_price() -> None:
    bot = ScriptedProvider([_call({"input_tokens": 3000, "output_tokens": 10}), "never sent"], model="local-model")
    bot.name = "ollama"  # type: ignore[misc]  # a local server: free, priced at $0
    result = _run(bot, BudgetCaps(max_tokens_total=6000))  # 3,010 used; the next call may take 4,096 out alone
    assert result.status == "budget" and len(bot.calls) == 1
    assert "this turn's token cap: 3,010 tokens used of 6,000 tokens" in result.text
    assert "--max-tokens-total" in result.text


def test_a_cost_cap_on_a_model_without_a_known_price_stops_with_a_clear_message() -> None:
    bot = ScriptedProvider(["never sent"], model="mystery-model")
    bot.name = "openai"  # type: ignore[misc]  # a real provider, a model the price table does not know
    result = _run(bot, BudgetCaps(max_cost=1.0))
    assert result.status == "budget" and bot.calls == []
    assert "mystery-model has no known price" in result.text and "--max-tokens-total" in result.text


# the 80 % warning ------------------------------------------------------------------------
def test_a_warning_shows_once_at_80_percent_in_every_view() -> None:
    events: list = []
    bot = Priced([_call(_usage_costing(0.085)), "done"])
    result = _run(bot, BudgetCaps(max_cost=0.105), events=events)  # 81 % after one call; the next still fits
    assert result.status == "completed" and len(bot.calls) == 2
    (warning,) = [e for e in events if isinstance(e, BudgetWarning)]
    assert (warning.scope, warning.unit, warning.cap, warning.step) == ("turn", "usd", 0.105, 2)
    assert warning.message == "81% of this turn's cost cap used: $0.0850 of $0.1050"
    assert "*⚠ Budget: 81% of this turn's cost cap used: $0.0850 of $0.1050*" in events_to_markdown(events)
    out = io.StringIO()
    view = TextView(out)
    for e in events:
        view.handle(e)
    assert "⚠ Budget: 81% of this turn's cost cap used" in out.getvalue()


def test_no_warning_below_80_percent() -> None:
    events: list = []
    _run(Priced([_call(_usage_costing(0.01)), "done"]), BudgetCaps(max_cost=1.0), events=events)
    assert not [e for e in events if isinstance(e, BudgetWarning)]


# side calls count --------------------------------------------------------------------------
def test_a_reflection_that_could_cross_the_cap_is_not_made() -> None:
    bot = Priced([_call(_usage_costing(0.02)), "never sent"])
    result = _run(bot, BudgetCaps(max_cost=0.03), think_level="low", reflect_every=1)
    assert result.status == "budget" and len(bot.calls) == 1  # no reflection request was sent
    assert "the next model call (reflection)" in result.text


def test_reflection_costs_count_against_the_cap() -> None:
    bot = Priced([_call({"input_tokens": 1, "output_tokens": 1}), "never sent"],
                 reflections=[{"text": "on track. Confidence: 0.9", "usage": _usage_costing(0.02)}])
    result = _run(bot, BudgetCaps(max_cost=0.035), think_level="low", reflect_every=1)
    assert result.status == "budget" and len(result.reflections) == 1
    assert result.cost_usd == pytest.approx(0.02, abs=1e-4)  # the reflection's cost is the turn's


def test_a_thinking_phase_call_that_could_cross_the_cap_is_not_made() -> None:
    thinker = MustNotCall()
    bot = Priced([_call({"input_tokens": 10, "output_tokens": 4000}), "never sent"])
    result = _run(bot, BudgetCaps(max_tokens_total=5000), thinking_phase=True, thinking_strategy="summary",
                  thinking_provider=thinker)
    assert result.status == "budget" and len(bot.calls) == 1
    assert "(thinking phase)" in result.text


def test_a_compaction_summary_that_could_cross_the_cap_is_not_made() -> None:
    filler = " ".join(f"row{i} revenue {i * 37 % 1000}" for i in range(400))
    history = []
    for i in range(6):
        history += [{"role": "user", "content": f"question {i}: {filler}"}, {"role": "assistant", "content": f"answer {i}"}]
    bot = MustNotCall()
    result = _run(bot, BudgetCaps(max_tokens_total=500), history=history, context_budget=4_000, compaction="summary")
    assert result.status == "budget"
    assert "(compaction)" in result.text
    assert history_problems(result.messages, require_final_assistant=True) == []


# a cap shared by several turns (%%compare) ---------------------------------------------------
def test_a_shared_budget_never_lets_parallel_runs_cross_it_together() -> None:
    shared = SharedBudget(0.03)
    assert shared.reserve("a", 0.0, 0.02) is None  # a's call may go: $0.02 reserved
    assert shared.reserve("b", 0.0, 0.02) == pytest.approx(0.02)  # b's would cross with a's reservation
    shared.settle("a", 0.005)  # a's call cost less than its most
    assert shared.reserve("b", 0.0, 0.02) is None
    assert shared.spent() == pytest.approx(0.005)


def test_the_decision_record_says_why_a_budget_turn_stopped() -> None:
    from jupyter_brain.agent.decisions.record import stop_reason

    result = _run(MustNotCall(), BudgetCaps(max_cost=0.001))
    assert stop_reason(result, max_steps=6, timeout_s=60) == "stopped before a model call that could cross a budget cap"


def test_the_session_ledger_counts_turns_and_memory_extractions_after_them(tmp_path: Any) -> None:
    from jupyter_brain.agent.cost_caps import session_spending

    log = EventLog(tmp_path / "events.sqlite")
    _run(Priced([{"text": "one", "usage": _usage_costing(0.03)}]), BudgetCaps(max_cost=1.0), log=log)
    log.add_record("memory_extraction", {"turn_id": "t", "memories": [], "cost_usd": 0.002}, session_id="s")
    log.add_record("memory_extraction", {"turn_id": "u", "memories": [], "cost_usd": 0.5}, session_id="other")
    spent = session_spending(log, "s")
    assert spent.turns == 1 and spent.cost_usd == pytest.approx(0.032, abs=1e-4)
    assert spent.last_cost_usd == pytest.approx(0.03, abs=1e-4) and spent.unpriced == 0
