"""thinking_levels.ipynb: the same question at ``--think off``, ``low`` and ``high``; the
reasoning grows with the level (at ``high`` it checks an assumption and the arithmetic).
One model answers all three: the level's instructions in the system prompt pick the script."""

from __future__ import annotations

import calendar
import re
from typing import Any

from jupyter_brain import ScriptedProvider

from ._base import tool_output
from ._sections import Section, script_of

Messages = list[dict[str, Any]]

# The month-over-month change, absolute and relative (at --think high the code also prints
# the month order, to check an assumption).
DROP_CODE = """\
revenue = sales.set_index("month")["revenue"]
change, pct = revenue.diff(), revenue.pct_change()
print("largest drop:", change.idxmin(), f"{change.min():+,.0f}", f"from {revenue.shift(1)[change.idxmin()]:,.0f}")
print("largest % drop:", pct.idxmin(), f"{pct.min():+.1%}")"""


def _computed(messages: Messages) -> tuple[str, str, str, str, str]:
    """(month, change, before, month by %, % change) from the latest run_python result."""
    out = tool_output(messages)
    month, change, before = re.search(r"largest drop: (\w+) ([-+\d,]+) from ([\d,]+)", out).groups()
    pct_month, pct = re.search(r"largest % drop: (\w+) ([-+\d.]+%)", out).groups()
    return month, change, before, pct_month, pct


def _answer_off(messages: Messages, tools: Any) -> str:
    month, change, before, _, _ = _computed(messages)
    return f"**{month}** had the largest revenue drop: {change} from {before} the month before."


def _answer_low(messages: Messages, tools: Any) -> str:
    month, change, before, _, _ = _computed(messages)
    return (f"<think>The output names {month}, {change}.</think>"
            f"**{month}** had the largest revenue drop: {change} from {before} the month before.")


def _answer_high(messages: Messages, tools: Any) -> dict[str, str]:
    month, change, before, pct_month, pct = _computed(messages)
    drop, start = int(change.replace(",", "")), int(before.replace(",", ""))
    after = start + drop
    same = "agree" if pct_month == month else "disagree"
    order = re.search(r"order: (.*)", tool_output(messages)).group(1)
    in_order = order.split() == calendar.month_abbr[1:]
    thinking = (
        f"Absolute: {month} ({change}). Relative: {pct_month} ({pct}). The two readings {same}.\n"
        f"Check the arithmetic: {start:,} - {-drop:,} = {after:,}, and {-drop:,} / {start:,} = {-drop / start:.1%}, "
        f"matching the printed {pct}.\n"
        + ("The months are in calendar order, so each change compares neighbouring months."
           if in_order else f"The rows are NOT in calendar order ({order}): sort them first.")
    )
    if pct_month == month:
        text = (f"**{month}** had the largest revenue drop by either measure: revenue fell from "
                f"{start:,} to {after:,}, **{change}** or **{pct}** on the month before.")
    else:
        text = (f"It depends on the measure: the largest absolute drop is **{month}** ({change}), "
                f"the largest relative drop **{pct_month}** ({pct}).")
    return {"thinking": thinking, "text": text}


RUN = [{"name": "run_python", "arguments": {"code": DROP_CODE}}]
NO_THINKING = r"(?s)\A(?!.*## Thinking Instructions)"  # --think off: the system prompt has no such section
SECTIONS = {
    "off": Section(system=NO_THINKING, script=lambda: ScriptedProvider([{"text": "", "tool_calls": RUN}, _answer_off])),
    "low": Section(system=r"Wrap brief reasoning", script=lambda: ScriptedProvider([
        {"text": "<think>Largest drop = most negative month-over-month change; compute it, don't eyeball it.</think>",
         "tool_calls": RUN},
        _answer_low,
    ])),
    "high": Section(system=r"Wrap thorough, step-by-step reasoning", script=lambda: ScriptedProvider([
        {"thinking": ("'Largest revenue drop' is ambiguous: the largest absolute decrease, or the largest "
                      "percentage decrease? They can differ when revenue levels vary through the year. "
                      "Compute both: diff() for the absolute change and pct_change() for the relative one. "
                      "Both assume the rows are in calendar order, since each month is compared with the "
                      "row before it. If the two measures disagree, report both."),
         "text": "", "tool_calls": [{"name": "run_python", "arguments": {
             "code": DROP_CODE + '\nprint("order:", " ".join(revenue.index))'}}]},
        _answer_high,
    ])),
}


def thinking_model() -> Any:
    """The notebook's model: ``--think off``, ``low`` and ``high`` each get their script."""
    return script_of(SECTIONS)
