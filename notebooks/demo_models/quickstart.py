"""quickstart.ipynb: a ReAct turn that inspects ``sales``, finds the largest revenue drop,
plots it and answers — four model calls and one reflection."""

from __future__ import annotations

import calendar
import re
from typing import Any

from jupyter_brain import ScriptedProvider

from ._base import DROP, pick, tool_output


def _observe_layout(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    # Step 2: read what inspect_variable returned, then compute the month-over-month change.
    shown = tool_output(messages, "inspect_variable")
    rows = re.search(r"shape: (\d+) rows", shown).group(1)
    columns = re.findall(r"^  (\w+) +\w+$", shown, re.M)
    code = (
        'revenue = sales.set_index("month")["revenue"]\n'
        "change = revenue.diff()\n"
        "worst = change.idxmin()\n"
        "before = revenue.shift(1)[worst]\n"
        'print(f"largest drop: {worst} {change[worst]:+,.0f} ({change[worst] / before:+.1%}) '
        'from {before:,.0f} to {revenue[worst]:,.0f}")\n'
        'print(f"year high: {revenue.idxmax()} {revenue.max():,.0f}")'
    )
    return {
        "thinking": "One row per month, calendar order, so revenue.diff() gives each month's change "
                    "from the month before; its minimum is the largest drop.",
        "text": f"Observation: `sales` has {rows} rows, one per month in calendar order, "
                f"with columns {', '.join(f'`{c}`' for c in columns)}.\n"
                "Thought: The month-over-month change is `revenue.diff()`; its minimum is the largest drop.\n"
                "Action: run_python",
        "tool_calls": [{"name": "run_python", "arguments": {"code": code}}],
        "usage": {"input_tokens": 1764, "output_tokens": 182},
    }


def _plot_drop(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    # Step 3: the numbers are in; draw revenue with the drop highlighted.
    worst, change, pct, before, after = DROP.search(tool_output(messages, "run_python")).groups()
    code = (
        "import matplotlib.pyplot as plt\n\n"
        'revenue = sales.set_index("month")["revenue"]\n'
        f'i = revenue.index.get_loc("{worst}")\n'
        "fig, ax = plt.subplots(figsize=(8, 3.5))\n"
        'ax.plot(revenue.index, revenue.values, marker="o", label="revenue")\n'
        'ax.plot(revenue.index[i - 1:i + 1], revenue.values[i - 1:i + 1], color="crimson", linewidth=3,\n'
        f'        label="largest drop ({change})")\n'
        'ax.set_title("Monthly revenue, 2024")\n'
        'ax.set_ylabel("US dollars")\n'
        "ax.legend()\n"
        "fig.tight_layout()"
    )
    return {
        "thinking": f"{worst} is the largest drop ({change}, {pct}). A line plot with that segment "
                    "in a second colour shows it in context.",
        "text": f"Observation: The largest drop is {worst}: {change} ({pct}), from {before} to {after}.\n"
                "Thought: Plot the monthly revenue and highlight that segment.\n"
                "Action: run_python",
        "tool_calls": [{"name": "run_python", "arguments": {"code": code}}],
        "usage": {"input_tokens": 2031, "output_tokens": 236},
    }


def _final_answer(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    # Step 4: answer with the numbers the code printed.
    numbers = tool_output(messages, "run_python", containing="largest drop")
    worst, change, pct, before, after = DROP.search(numbers).groups()
    high_month, high = re.search(r"year high: (\w+) ([\d,]+)", numbers).groups()
    plotted = tool_output(messages, "run_python", containing="figure")
    figure = re.search(r"created 1 figure: (Figure \d+)", plotted).group(1)
    month_name = dict(zip(calendar.month_abbr, calendar.month_name, strict=True))
    return {
        "thinking": "Both results are in: the numbers and the figure. Answer with them.",
        "text": f"Observation: {figure} is drawn, with the drop highlighted.\n"
                f"Final Answer: **{month_name[worst]}** had the largest revenue drop: revenue fell from "
                f"${before} to ${after}, a change of **{change} ({pct})** from the month before. "
                f"The plot below marks it in red. Revenue recovers from the next month on and "
                f"reaches the year's high in {month_name[high_month]} (${high}).",
        "usage": {"input_tokens": 2268, "output_tokens": 141},
    }


def _reflect(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    # The reflection request holds the task and the recent tool results.
    prompt = messages[-1]["content"]
    worst, change = re.search(r"largest drop: (\w+) ([-+\d,]+)", prompt).groups()
    plotted = "created 1 figure" in prompt
    return {
        "text": f"The drop is computed from `revenue.diff()` ({worst}, {change})"
                + (" and the plot is drawn" if plotted else "")
                + ". Nothing is missing: state the answer with these numbers.\n"
                "Confidence: 0.9\nNext: write the final answer",
        "usage": {"input_tokens": 512, "output_tokens": 58},
    }


def _scripted() -> ScriptedProvider:
    return ScriptedProvider(
        [
            {
                "thinking": "The user wants the month with the largest month-over-month revenue decrease. "
                            "First check how `sales` is laid out: which column holds revenue, and are "
                            "the months in calendar order?",
                "text": "Thought: I need to see how `sales` is laid out before computing anything.\n"
                        "Action: inspect_variable",
                "tool_calls": [{"name": "inspect_variable", "arguments": {"name": "sales"}}],
                "usage": {"input_tokens": 1490, "output_tokens": 96},
            },
            _observe_layout,
            _plot_drop,
            _final_answer,
        ],
        reflections=[_reflect],
    )


def quickstart_model() -> Any:
    """The quickstart's model: ``"auto"`` when one is configured, else the scripted one."""
    return pick(_scripted)
