"""StrategyStep kinds: how they display and how they travel as dicts."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.strategies import (
    Action,
    Branch,
    FinalAnswer,
    Observation,
    Reflection,
    Thought,
    step_from_dict,
)


def test_step_display_like_reference():
    assert str(Thought(text="testing")) == "Thought: testing"
    assert str(Thought(text="x", label="Plan")) == "Plan: x"
    assert str(Action(tool="read", args={"a": 1})) == "Action: read"
    assert str(Observation(text="o")) == "Observation: o"
    assert str(Reflection(critique="c", revised_plan="p")) == "Reflection: c"
    assert str(FinalAnswer(text="42")) == "Final: 42"
    branch = Branch(branch_id=1, thought="try X", score=0.85)
    assert "0.85" in str(branch)
    assert str(branch) == "Branch[1] (score=0.85): try X"
    assert str(Branch(branch_id=2, thought="y", score=0.5, selected=True)) == "Branch[2] (score=0.50) selected: y"


@pytest.mark.parametrize(
    "step",
    [
        Thought(text="t", label="Step 1"),
        Action(tool="read", args={"path": "a.csv"}),
        Observation(text="o"),
        Reflection(critique="c", revised_plan="p"),
        Branch(branch_id=3, thought="b", score=0.25, decision_point=2, selected=True),
        FinalAnswer(text="f"),
    ],
)
def test_step_round_trip(step):
    again = step_from_dict(step.model_dump())
    assert again == step and type(again) is type(step)
    assert step_from_dict(step.model_dump(mode="json")) == step


