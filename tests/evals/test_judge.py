"""--judge: a model's opinion, labelled so, billed, bounded by the shared cap."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.cost_caps import SharedBudget
from jupyter_brain.evals import JudgeCheck
from jupyter_brain.evals.judge import JUDGE_KIND, parse_verdict
from tests.priced_providers import SONNET_IN, SONNET_OUT, MustNotCall, Priced


def judge_reply(messages, tools):
    assert messages[0]["kind"] == JUDGE_KIND
    return {"text": "PASS\nthe month is right" if "March" in messages[1]["content"] else "FAIL: wrong month",
            "usage": {"input_tokens": 100, "output_tokens": 10}}


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [("PASS\nright number", (True, "right number")), ("FAIL: wrong month", (False, "wrong month")),
     ("**Verdict: pass** good", (True, "good")), ("maybe", (None, "the judge's reply is neither PASS nor FAIL: maybe")),
     ("", (None, "the judge gave no verdict"))],
)
def test_parse_verdict(reply, verdict):
    assert parse_verdict(reply) == verdict


def test_a_judge_is_an_opinion_with_its_cost():
    judge = JudgeCheck(Priced([judge_reply, judge_reply]), "Which month dropped most?", "names the month")
    good, bad = judge.evaluate("March", {}), judge.evaluate("May", {})
    assert good.passed and good.opinion and good.reason == "the month is right" and good.label == "judge: names the month"
    assert not bad.passed and bad.reason == "wrong month"
    assert good.input_tokens == 100 and good.output_tokens == 10
    assert good.cost_usd == pytest.approx(100 * SONNET_IN + 10 * SONNET_OUT)


def test_the_shared_cap_bounds_the_judge():
    budget = SharedBudget(0.001)  # a sonnet call writing up to 1,000 tokens could cost $0.015
    verdict = JudgeCheck(MustNotCall(), "q", budget=budget).evaluate("March", {})
    assert not verdict.passed and verdict.opinion
    assert verdict.reason.startswith("not judged: the call (up to $") and "comparison's $0.001 cap" in verdict.reason


def test_the_judge_is_billed_to_the_shared_budget():
    budget = SharedBudget(1.0)
    JudgeCheck(Priced([judge_reply]), "q", budget=budget).evaluate("March", {})
    assert budget.spent() == pytest.approx(100 * SONNET_IN + 10 * SONNET_OUT)


def test_a_failing_judge_is_a_verdict():
    verdict = JudgeCheck(Priced([{"error": "overloaded"}]), "q").evaluate("March", {})
    assert not verdict.passed and verdict.reason.startswith("not judged: ProviderError")
    assert JudgeCheck(MustNotCall(), "q").evaluate("", {}).reason == "not judged: the run gave no answer"
