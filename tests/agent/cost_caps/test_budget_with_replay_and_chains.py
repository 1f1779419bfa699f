"""The budget prices a call by who will really answer it (issue #24).

A replayed call is free; but the call at which a recording stops matching goes to the live
model, and must be checked at the live model's price *before* it is made. A chain may hand
a call to any member, so the call is checked at its dearest member's price.
"""

from __future__ import annotations

from typing import Any

import pytest
from priced_providers import MustNotCall, Priced

from jupyter_brain.agent.cost_caps import BudgetCaps, estimate_call
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.foundation.tokens import TokenCounter
from jupyter_brain.providers.chain import ChainProvider
from jupyter_brain.providers.replay import ReplayingProvider, TurnRecording
from jupyter_brain.providers.scripted import ScriptedProvider

STATE = {"value": 1}
MESSAGES = [{"role": "user", "content": "How much is the premium plan?"}]


@tool
def peek() -> str:
    """The value the agent looks at."""
    return f"value={STATE['value']}"


def _turn(provider: Any, caps: BudgetCaps | None = None, log: EventLog | None = None) -> Any:
    harness = AgentHarness(provider, AgentToolRegistry([peek]), log or EventLog(":memory:"))
    return harness.run_turn("s", [], "What is the value?", budget=caps)


@pytest.fixture()
def recording() -> TurnRecording:
    """A live turn of two steps (peek, then the answer), recorded."""
    STATE["value"] = 1
    live = Priced([{"text": "", "tool_calls": [{"name": "peek", "arguments": {}}]}, "It is 1."])
    provider = ReplayingProvider(live, cell="k")
    assert _turn(provider).status == "completed"
    return provider.recording()


def test_a_replayed_turn_passes_any_cap_for_free(recording: TurnRecording) -> None:
    STATE["value"] = 1
    result = _turn(ReplayingProvider(MustNotCall(), [recording], cell="k"), BudgetCaps(max_cost=0.000001))
    assert result.status == "completed" and result.text == "It is 1." and result.cost_usd == 0


def test_the_call_where_a_replay_goes_live_is_checked_at_the_live_price(recording: TurnRecording) -> None:
    """The tool result changed, so step 2 no longer matches: that call would go to the live
    model (~$0.016 at most) and the cap is $0.01, so it is not made."""
    STATE["value"] = 2
    result = _turn(ReplayingProvider(MustNotCall(), [recording], cell="k"), BudgetCaps(max_cost=0.01))
    assert result.status == "budget", result.text
    assert "The call was not made" in result.text and result.cost_usd == 0


def test_the_live_call_after_a_mismatch_goes_when_it_fits(recording: TurnRecording) -> None:
    STATE["value"] = 2
    live = Priced(["It is 2."])
    result = _turn(ReplayingProvider(live, [recording], cell="k"), BudgetCaps(max_cost=1.0))
    assert result.status == "completed" and result.text == "It is 2." and result.cost_usd > 0


def test_a_replay_prices_a_call_it_cannot_answer_at_the_live_price(recording: TurnRecording) -> None:
    replay = ReplayingProvider(Priced(), [recording], cell="k")
    changed = estimate_call(MESSAGES, [], replay, TokenCounter())  # not the recorded request
    assert changed.cost_usd is not None and changed.cost_usd > 0 and changed.model == "claude-sonnet-4"


def test_a_chain_is_checked_at_its_dearest_member() -> None:
    counter = TokenCounter()
    cheap = ScriptedProvider(["a"])  # free, the active member
    chain = ChainProvider([cheap, Priced(["b"])])
    call = estimate_call(MESSAGES, [], chain, counter)
    alone = estimate_call(MESSAGES, [], Priced(), counter)
    assert call.cost_usd == alone.cost_usd and call.model == "claude-sonnet-4"


def test_a_chain_with_an_unpriced_local_fallback_is_checked_at_the_priced_member() -> None:
    class Local(ScriptedProvider):
        name = "openai-compatible"

    call = estimate_call(MESSAGES, [], ChainProvider([Priced(["a"]), Local(["b"], model="smollm2")]), TokenCounter())
    assert call.cost_usd is not None and call.model == "claude-sonnet-4"
