"""The short scripts: bounded_context.ipynb, mcp_tools.ipynb and safety_and_undo.ipynb."""

from __future__ import annotations

from typing import Any

from jupyter_brain import ScriptedProvider

from ._base import call, pick, tool_output

VIEWS = ["sales.assign(change=sales.revenue.diff(), pct=sales.revenue.pct_change().round(3))",
         "sales.describe()", "sales.sort_values('revenue')", "sales.assign(per_unit=sales.revenue / sales.units)"]


def _cell_script(n: int) -> list[Any]:
    calls = [{"text": f"Looking at view {i + 1}.",
              "tool_calls": [call("run_python", code=f"print({VIEWS[i]}.to_string())")]}
             for i in range(4)]
    return [*calls, f"Part {n} done: March had the largest revenue drop."]


def bounded_context_model() -> Any:
    """Three cells of four tool calls each, and the summary the compaction asks for."""
    return pick(lambda: ScriptedProvider(
        [*_cell_script(1), *_cell_script(2), *_cell_script(3)],
        summaries=["Earlier: the user studies `sales` (12 months of 2024). Month-over-month changes, "
                   "summary statistics, the sorted table and revenue per unit were computed; March had "
                   "the largest revenue drop."],
    ))


def _tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [call(name, **arguments)]}


NOTE = "Customers ask whether the 24 EUR price applies to annual plans."


def mcp_model() -> Any:
    """The turns with the notes server's tools: search, a refused and an allowed write, a chart."""
    return pick(lambda: ScriptedProvider([
        _tool("notes__search_notes", query="pricing"),
        lambda messages, tools: "The note says: " + tool_output(messages).split(": ", 1)[1],
        _tool("notes__add_note", title="pricing-faq", text=NOTE),
        "I could not save the note: in read-only mode tools that change something are refused.",
        _tool("notes__add_note", title="pricing-faq", text=NOTE),
        lambda messages, tools: f"Done: {tool_output(messages)}.",
        _tool("notes__notes_chart"),
        "Here is the chart of the notes' lengths; the image is saved as an artifact.",
    ]))


REPORT = "# Revenue report\n\nMarch had the largest drop.\n"


def _after_the_write(messages: list[dict[str, Any]], tools: Any) -> str:
    """Tested headless, the write is denied; in JupyterLab the reader may click Approve."""
    if tool_output(messages).startswith(("Denied", "Permission denied")):
        return "I could not save it: the write was not approved."
    return "Saved `report.md`."


def safety_model() -> Any:
    """A file write (denied when tested, approved or not in JupyterLab, then allowed) and an
    edit, for approvals and undo."""
    return pick(lambda: ScriptedProvider([
        {"text": "I'll save the report.", "tool_calls": [call("write_file", path="report.md", content=REPORT)]},
        _after_the_write,
        {"text": "Saving it now.", "tool_calls": [call("write_file", path="report.md", content=REPORT)]},
        "Saved `report.md`.",
        {"text": "Adding the cause to the notes.",
         "tool_calls": [call("edit_file", path="notes.md", old="# Sales data notes", new="# Sales data notes (reviewed)")]},
        "Updated `notes.md`.",
    ]))
