"""strategy_comparison.ipynb: each strategy answers in its own format (a real model is asked
for these formats by the strategy's system prompt), then a follow-up in a normal session.
One model answers all: the follow-up by its prompt, each ``%%compare`` run by its strategy
(each run clones the model, so every run starts its script from the top)."""

from __future__ import annotations

from typing import Any

from jupyter_brain import ScriptedProvider

from ._sections import Section, script_of

LOOK = [{"name": "inspect_variable", "arguments": {"name": "sales", "rows": 8}}]


FRAMEWORKS = {"react": "ReAct", "reflexion": "REFLEXION", "cot": "CHAIN OF THOUGHT", "tot": "TREE OF THOUGHTS"}


def _scripted() -> dict[str, ScriptedProvider]:
    """One script per strategy of the comparison."""
    return {
        "react": ScriptedProvider([
            {"text": "Thought: I need the monthly revenue first.\nAction: inspect_variable", "tool_calls": LOOK},
            "Observation: Jun 57,100 → Jul 44,900 is the steepest fall.\n"
            "Final Answer: **July** had the largest drop: -12,200 (-21.4%).",
        ], delay_s=0.01),
        "reflexion": ScriptedProvider([
            {"text": "Plan: read `sales`, compare consecutive months.\nAct: inspect_variable", "tool_calls": LOOK},
            "Observe: the biggest fall is Jun → Jul.\nReflect: I compared every pair, none is missed.\n"
            "Final Answer: **July**, down 12,200 from June.",
        ], delay_s=0.01),
        "cot": ScriptedProvider([
            "Step 1: The changes are +3,700, -1,600, +5,500, +2,600, -1,300, -12,200, +2,700.\n"
            "Step 2: The most negative is -12,200, from Jun to Jul.\nVerify: 57,100 - 44,900 = 12,200.\n"
            "Final Answer: **July** (-12,200).",
        ], delay_s=0.01),
        "tot": ScriptedProvider([
            "Candidate 1: compute month-over-month differences → Score: 0.9\n"
            "Candidate 2: compare each month with the yearly mean → Score: 0.5\n"
            "Candidate 3: eyeball the table → Score: 0.2\n"
            "Selected: Candidate 1\nReason: exact and cheap.\n"
            "=== Decision point ===\n"
            "Candidate 1: report the absolute drop → Score: 0.8\n"
            "Candidate 2: report the percentage only → Score: 0.3\n"
            "Selected: Candidate 1\n"
            "Final Answer: **July**: -12,200 from June (-21.4%).",
        ], delay_s=0.01),
    }


def _followup() -> ScriptedProvider:
    """The follow-up turn with the strategy that won (Tree-of-Thoughts)."""
    return ScriptedProvider([
        "Candidate 1: state the month and the drop → Score: 0.9\n"
        "Candidate 2: also list every month's change → Score: 0.3\n"
        "Selected: Candidate 1\n"
        "Final Answer: **July** had the largest revenue drop: 57,100 → 44,900 (-12,200, -21.4%).",
    ])


SECTIONS = {
    "followup": Section(_followup, prompt=r"One sentence\."),
    **{strategy: Section((lambda s=strategy: _scripted()[s]), system=rf"(?m)^# {head} FRAMEWORK")
       for strategy, head in FRAMEWORKS.items()},
}


def comparison_model() -> Any:
    """The notebook's model, for ``%%compare`` (each run by its strategy) and the follow-up."""
    return script_of(SECTIONS)
