"""strategies.ipynb: one question, answered in each strategy's format (ReAct, Reflexion,
Chain-of-Thought, Tree-of-Thoughts), each running the same code first. One model answers
all four: the strategy's framework in the system prompt picks the script."""

from __future__ import annotations

from typing import Any

from jupyter_brain import ScriptedProvider

from ._base import DROP, tool_output
from ._sections import Section, script_of

DROP_CODE = """\
revenue = sales.set_index("month")["revenue"]
change = revenue.diff()
worst = change.idxmin()
print(f"largest drop: {worst} {change[worst]:+,.0f} ({change[worst] / revenue.shift(1)[worst]:+.1%}) "
      f"from {revenue.shift(1)[worst]:,.0f} to {revenue[worst]:,.0f}")"""
RUN = [{"name": "run_python", "arguments": {"code": DROP_CODE}}]


def _drop(messages: list[dict[str, Any]]) -> tuple[str, ...]:
    """(month, change, percent, before, after) from the latest tool result."""
    return DROP.search(tool_output(messages)).groups()


def _react(messages: list[dict[str, Any]], tools: Any) -> str:
    month, change, pct, before, after = _drop(messages)
    return (f"Observation: The largest drop is {month}: {change} ({pct}), from {before} to {after}.\n"
            f"Thought: That answers the question.\n"
            f"Final Answer: **{month}** had the largest revenue drop, {change} ({pct}) on the month before.")


def _reflexion(messages: list[dict[str, Any]], tools: Any) -> str:
    month, change, pct, before, after = _drop(messages)
    return (f"Observe: The largest drop is {month}: {change} ({pct}), from {before} to {after}.\n"
            "Reflect: The change covers all twelve months in calendar order, so the answer is sound. "
            f"One gap: I ranked months by absolute change; {pct} is large, but a percentage ranking "
            "was not computed for the other months.\n"
            "Revised plan: Answer now; rank by pct_change() if relative drops matter.\n"
            f"Final Answer: **{month}**, with a drop of {change} ({pct}) from the month before.")


def _cot(messages: list[dict[str, Any]], tools: Any) -> str:
    month, change, pct, before, after = _drop(messages)
    start, end = (int(v.replace(",", "")) for v in (before, after))
    return (f"Verify: {start:,} - {end:,} = {start - end:,}, matching {change}; "
            f"{start - end:,} / {start:,} = {(start - end) / start:.1%}, matching {pct}.\n"
            f"Final Answer: **{month}** had the largest revenue drop, {change} ({pct}).")


def _tot(messages: list[dict[str, Any]], tools: Any) -> str:
    month, change, pct, before, after = _drop(messages)
    return (f"Final Answer: **{month}** had the largest revenue drop, {change} ({pct}), from {before} to {after}. "
            "Explored three approaches; exact computation (0.9) won over a plot (0.5, no exact figure) "
            "and reading the preview (0.3, only 5 of 12 rows).")


SECTIONS = {
    "react": Section(system=r"(?m)^# ReAct FRAMEWORK", script=lambda: ScriptedProvider([
        {"text": "Thought: The largest drop is the most negative month-over-month change of `revenue`; "
                 "compute it instead of reading it off.\nAction: run_python", "tool_calls": RUN},
        _react,
    ])),
    "reflexion": Section(system=r"(?m)^# REFLEXION FRAMEWORK", script=lambda: ScriptedProvider([
        {"text": "Plan: Compute the month-over-month change of `revenue` and take its minimum.\n"
                 "Act: run_python", "tool_calls": RUN},
        _reflexion,
    ])),
    "cot": Section(system=r"(?m)^# CHAIN OF THOUGHT FRAMEWORK", script=lambda: ScriptedProvider([
        {"text": "Let's think step by step.\n"
                 "Step 1: A drop is a decrease from one month to the next, so I need the month-over-month change of `revenue`.\n"
                 "Step 2: That only compares neighbouring months if the rows are in calendar order; they run Jan to Dec.\n"
                 "Step 3: The largest drop is the most negative change. Compute it with pandas.",
         "tool_calls": RUN},
        _cot,
    ])),
    "tot": Section(system=r"(?m)^# TREE OF THOUGHTS FRAMEWORK", script=lambda: ScriptedProvider([
        {"text": "=== Decision Point ===\n"
                 "Candidate 1: Compute revenue.diff() with pandas and take the minimum → Score: 0.9\n"
                 "Candidate 2: Read the numbers off the inspect_variable preview → Score: 0.3\n"
                 "Candidate 3: Plot revenue and look for the steepest fall → Score: 0.5\n"
                 "Selected: Candidate 1 (score: 0.9)\n"
                 "Reason: Exact, covers all twelve months, one tool call.",
         "tool_calls": RUN},
        _tot,
    ])),
}


def strategy_model() -> Any:
    """The notebook's model: each ``--strategy`` section gets its script."""
    return script_of(SECTIONS)
