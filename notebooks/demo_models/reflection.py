"""reflection.ipynb: a periodic reflection, one after a tool error, the per-turn budget,
and a turn at ``--think off`` (no reflection at all): one model, each section's prompt
picks its script."""

from __future__ import annotations

import re
from typing import Any

from jupyter_brain import ScriptedProvider

from ._base import run, this_turn, tool_output
from ._sections import Section, script_of

Messages = list[dict[str, Any]]

QUARTERS = """\
quarter = sales.index // 3 + 1
quarterly = sales.groupby(quarter)[["revenue", "units"]].sum().rename_axis("quarter")
print(quarterly.to_string())"""

GROWTH = """\
growth = quarterly["revenue"].pct_change()
print(growth.map("{:+.1%}".format).to_string())
print("fastest growth: Q%d" % growth.idxmax())"""

CHECK = """\
print("sum of quarters:", quarterly["revenue"].sum(), "| sum of months:", sales["revenue"].sum())"""


def _answer_quarters(messages: Messages, tools: Any) -> str:
    outputs = [m["content"] for m in this_turn(messages) if m["role"] == "tool"]
    totals = re.findall(r"^(\d)\s+(\d+)\s+\d+$", outputs[1], re.M)
    best = re.search(r"fastest growth: Q(\d)", outputs[2]).group(1)
    rate = re.search(rf"^{best}\s+([-+\d.]+%)$", outputs[2], re.M).group(1)
    total = re.search(r"sum of months: (\d+)", outputs[3]).group(1)
    table = "\n".join(f"| Q{q} | {int(v):,} |" for q, v in totals)
    return (f"| quarter | revenue |\n|---|---|\n{table}\n\n"
            f"**Q{best}** grew most over the quarter before ({rate}). "
            f"The quarters add up to the year's {int(total):,}.")


def _reflect_on_progress(messages: Messages, tools: Any) -> str:
    # The reflection request: the task, then "Recent tool results:" with the latest outputs.
    prompt = messages[-1]["content"]
    if "fastest growth" in prompt:
        best = re.search(r"fastest growth: Q(\d)", prompt).group(1)
        checked = re.search(r"sum of quarters: (\d+) \| sum of months: (\d+)", prompt).groups()
        agree = "agree" if checked[0] == checked[1] else "DISAGREE"
        return (f"Totals, growth and a cross-check are done: Q{best} grew fastest, and the quarterly "
                f"sums {agree} with the monthly total. Ready to answer.\nConfidence: 0.9")
    quarters = len(re.findall(r"^\d\s+\d+\s+\d+$", prompt, re.M))
    return (f"The {quarters} quarterly totals are in. Still missing: growth from one quarter to the "
            "next, which answers the second half of the question.\n"
            "Confidence: 0.75\nNext: compute quarter-over-quarter growth with pct_change()")


def _periodic() -> ScriptedProvider:
    return ScriptedProvider(
        [
            {"text": "First I'll check the layout of `sales`.", "thinking": "Need the columns and row order.",
             "tool_calls": [{"name": "inspect_variable", "arguments": {"name": "sales", "rows": 3}}]},
            run(QUARTERS, "One row per month in calendar order: three rows make a quarter.",
                "Group rows 0-2, 3-5, 6-8, 9-11."),
            run(GROWTH, "Now the growth from one quarter to the next.", "pct_change() on the totals."),
            run(CHECK, "A quick cross-check before answering.", "The quarterly sums must equal the yearly sum."),
            _answer_quarters,
        ],
        reflections=[_reflect_on_progress, _reflect_on_progress],
    )


def _retry_after_error(messages: Messages, tools: Any) -> dict[str, Any]:
    error = tool_output(messages)
    suggestion = re.search(r"Did you mean: (\w+)", error).group(1)
    return {"text": f"There is no `sale`; the tool suggests `{suggestion}`, which must be what you meant.",
            "tool_calls": [{"name": "inspect_variable", "arguments": {"name": suggestion}}]}


def _answer_mean(messages: Messages, tools: Any) -> str:
    mean = float(re.search(r"^mean\s+([\d.]+)", tool_output(messages), re.M).group(1))
    return f"(`sale` doesn't exist, so I used `sales`.) The average monthly revenue is **{mean:,.0f}**."


def _reflect_on_error(messages: Messages, tools: Any) -> str:
    prompt = messages[-1]["content"]
    error = re.search(r"the most recent tool error was: (.*)", prompt).group(1)
    suggestion = re.search(r"Did you mean: (\w+)", error).group(1)
    return (f"The lookup failed ({error}). The user almost certainly meant `{suggestion}`; "
            f"inspect that instead and say so in the answer.\n"
            f"Confidence: 0.8\nNext: inspect `{suggestion}`")


def _tool_error() -> ScriptedProvider:
    return ScriptedProvider(
        [{"text": "", "tool_calls": [{"name": "inspect_variable", "arguments": {"name": "sale"}}]},
         _retry_after_error, _answer_mean],
        reflections=[_reflect_on_error],
    )


def _check_quarter(q: int) -> str:
    return f"""\
part = sales.iloc[{3 * (q - 1)}:{3 * q}].set_index("month")["revenue"]
print("Q{q}:", " ".join(f"{{m}} {{v:+,.0f}}" for m, v in part.diff().dropna().items()))"""


BOUNDARIES = """\
change = sales.set_index("month")["revenue"].diff()
print("between quarters:", " ".join(f"{m} {change[m]:+,.0f}" for m in ["Apr", "Jul", "Oct"]))"""


def _answer_drops(messages: Messages, tools: Any) -> str:
    outputs = "\n".join(m["content"] for m in this_turn(messages) if m["role"] == "tool")
    within = re.findall(r"(\w{3}) (-[\d,]+)", outputs.partition("between quarters:")[0])
    between = re.findall(r"(\w{3}) (-[\d,]+)", outputs.partition("between quarters:")[2])
    worst = min(within + between, key=lambda found: int(found[1].replace(",", "")))
    return ("Drops within a quarter: " + ", ".join(f"{m} ({v})" for m, v in within) + ". "
            "Between quarters: " + (", ".join(f"{m} ({v}, against the month before)" for m, v in between) or "none") + ". "
            f"The largest is **{worst[0]} ({worst[1]})**.")


def _budget() -> ScriptedProvider:
    return ScriptedProvider(
        [*[run(_check_quarter(q), f"Quarter {q}.") for q in (1, 2, 3, 4)],
         run(BOUNDARIES, "The first month of each quarter has not been compared with the month before it yet."),
         _answer_drops],
        reflections=[f"Quarter {q} checked, {4 - q} to go.\nConfidence: 0.8" for q in (1, 2, 3, 4)],
    )


def _answer_total(messages: Messages, tools: Any) -> str:
    described = tool_output(messages)
    count = float(re.search(r"^count\s+([\d.]+)", described, re.M).group(1))
    mean = float(re.search(r"^mean\s+([\d.]+)", described, re.M).group(1))
    return f"{count:.0f} months averaging {mean:,.0f}: the year's total revenue is **{count * mean:,.0f}**."


def _think_off() -> ScriptedProvider:
    return ScriptedProvider([
        {"text": "", "tool_calls": [{"name": "inspect_variable", "arguments": {"name": "sales"}}]},
        _answer_total,
    ])


SECTIONS = {
    "periodic": Section(_periodic, prompt=r"total revenue of each quarter"),
    "tool_error": Section(_tool_error, prompt=r"revenue in `sale`\?"),
    "budget": Section(_budget, prompt=r"^Check each quarter"),
    "think_off": Section(_think_off, prompt=r"^What is the total revenue"),
}


def reflection_model() -> Any:
    """The notebook's model: ``periodic``, ``tool_error``, ``budget`` and ``think_off``."""
    return script_of(SECTIONS)
