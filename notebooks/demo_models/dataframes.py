"""dataframe_tools.ipynb: one scripted model, a script per section (listing, inspecting,
running code, a refused run, the file tools, a user-defined tool), picked by the prompt."""

from __future__ import annotations

import re
from typing import Any

from jupyter_brain import ScriptedProvider

from ._base import call, this_turn, tool_output
from ._sections import Section, script_of

Messages = list[dict[str, Any]]


def _what_is_there(messages: Messages, tools: Any) -> str:
    variables = tool_output(messages, "list_variables")
    files = tool_output(messages, "list_files")
    frames = re.findall(r"^(\w+)\s+DataFrame\s+(\d+) rows × (\d+) cols", variables, re.M)
    listed = re.findall(r"^\s*(\S+\.(?:csv|md))\s", files, re.M)
    return ("Variables: " + ", ".join(f"`{n}` ({r} rows × {c} columns)" for n, r, c in frames)
            + ". Files in `data/`: " + ", ".join(f"`{f}`" for f in listed) + ".")


def _describe_sales(messages: Messages, tools: Any) -> str:
    shown = tool_output(messages, "inspect_variable")
    shape = re.search(r"shape: (.*)", shown).group(1)
    dtypes = re.findall(r"^  (\w+) +(\w+)$", shown, re.M)
    stats = {name: [float(v) for v in values.split()]
             for name, values in re.findall(r"^(mean|min|max)\s+(.*)$", shown, re.M)}
    numeric = [name for name, dtype in dtypes if dtype.startswith(("int", "float"))]
    rows = "\n".join(f"| `{col}` | {stats['min'][i]:,.0f} | {stats['mean'][i]:,.0f} | {stats['max'][i]:,.0f} |"
                     for i, col in enumerate(numeric))
    return (f"`sales` is {shape}: " + ", ".join(f"`{n}` ({t})" for n, t in dtypes) + ", no missing values.\n\n"
            f"| column | min | mean | max |\n|---|---|---|---|\n{rows}")


QUARTERLY = """\
quarterly = sales.groupby(sales.index // 3 + 1)[["revenue", "units"]].sum().rename_axis("quarter")
print(quarterly.to_string())
print("most units: Q%d" % quarterly["units"].idxmax())"""


def _most_units(messages: Messages, tools: Any) -> str:
    out = tool_output(messages, "run_python")
    best = re.search(r"most units: Q(\d)", out).group(1)
    units = re.search(rf"^{best}\s+\d+\s+(\d+)$", out, re.M).group(1)
    return f"`quarterly` is ready (one row per quarter). **Q{best}** sold the most units: {int(units):,}."


def _explain_denial(messages: Messages, tools: Any) -> str:
    refusal = tool_output(messages, "run_python")
    mode = re.search(r"permission mode '([\w-]+)'", refusal).group(1)
    return (f"I couldn't add the column: running Python isn't allowed in `{mode}` mode, so `sales` is "
            "unchanged. To let me do it, rerun this cell with `--permission auto`, or with "
            "`--permission ask` (the default) and approve the call. Or add it yourself:\n\n"
            "```python\nsales[\"price\"] = (sales[\"revenue\"] / sales[\"units\"]).round(2)\n```")


def _read_notes(messages: Messages, tools: Any) -> dict[str, Any]:
    hit = tool_output(messages, "search_files")
    path = re.search(r"^(\S+?):\d+:", hit, re.M).group(1)
    return {"text": f"`{path}` mentions July; reading it.", "tool_calls": [call("read_file", path=path)]}


def _explain_july(messages: Messages, tools: Any) -> str:
    note = re.search(r"- July: (.*)", tool_output(messages, "read_file")).group(1)
    path = re.search(r"^(\S+?):\d+:", tool_output(messages, "search_files"), re.M).group(1)
    return (f"Yes. `{path}` says that in July {note[0].lower() + note[1:]} "
            "Reduced shipping for most of the month would explain the dip.")


def _compare(messages: Messages, tools: Any) -> str:
    turn = this_turn(messages)
    results = {m["tool_call_id"]: float(m["content"]) for m in turn if m["role"] == "tool"}
    calls = [c for m in turn if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    by_month = {c["arguments"]["month"]: results[c["id"]] for c in calls}
    gap = by_month["Dec"] - by_month["Jul"]
    return (f"December brought in {by_month['Dec']:,.0f} and July {by_month['Jul']:,.0f}: "
            f"**{gap:,.0f} more** in December ({gap / by_month['Jul']:.0%} above July).")


SECTIONS = {
    "overview": Section(prompt=r"What data do I have", script=lambda: ScriptedProvider([
        {"text": "Let me look at your variables and the data folder.",
         "tool_calls": [call("list_variables"), call("list_files", path="data")]},
        _what_is_there,
    ])),
    "describe": Section(prompt=r"^Describe `sales`", script=lambda: ScriptedProvider([
        {"text": "", "tool_calls": [call("inspect_variable", name="sales", rows=3)]}, _describe_sales,
    ])),
    "quarterly": Section(prompt=r"Make a DataFrame `quarterly`", script=lambda: ScriptedProvider([
        {"text": "", "tool_calls": [call("run_python", code=QUARTERLY)]}, _most_units,
    ])),
    "read_only": Section(prompt=r"Add a `price` column", script=lambda: ScriptedProvider([
        {"text": "", "tool_calls": [call("run_python", code='sales["price"] = (sales["revenue"] / sales["units"]).round(2)')]},
        _explain_denial,
    ])),
    "files": Section(prompt=r"explains the July dip", script=lambda: ScriptedProvider([
        {"text": "", "tool_calls": [call("search_files", query="July", path="data")]}, _read_notes, _explain_july,
    ])),
    "own_tool": Section(prompt=r"month_revenue tool", script=lambda: ScriptedProvider([
        {"text": "", "tool_calls": [call("month_revenue", month="Dec"), call("month_revenue", month="Jul")]},
        _compare,
    ])),
}


def dataframe_model() -> Any:
    """The notebook's model: each section's prompt picks its script (see ``SECTIONS``)."""
    return script_of(SECTIONS)
