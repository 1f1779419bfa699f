"""Tool selection: the most relevant tools for a request, in their original order."""

from __future__ import annotations

from jupyter_brain.agent.context.selection import select_tools


def schema(name: str, description: str, *params: str) -> dict:
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": {p: {"type": "string"} for p in params}}}


TOOLS = [
    schema("run_python", "Execute Python code in the kernel and return its output.", "code"),
    schema("read_file", "Read a text file from the working directory.", "path"),
    schema("write_file", "Write text to a file, creating it if needed.", "path", "content"),
    schema("list_variables", "List the variables in the kernel namespace with their types.", "pattern"),
    schema("inspect_dataframe", "Describe a pandas DataFrame: columns, dtypes, head and summary statistics.",
           "name"),
    schema("plot_chart", "Draw a chart (line, bar, scatter) from a DataFrame.", "kind", "x", "y"),
    schema("search_web", "Search the web for pages.", "query"),
    schema("read_artifact", "Read a stored large tool output by its handle.", "handle"),
]


def names(schemas) -> list[str]:
    return [s["name"] for s in schemas]


def test_select_tools_is_a_no_op_when_small() -> None:
    assert select_tools(TOOLS, "anything", len(TOOLS)) == TOOLS
    assert select_tools(TOOLS[:3], "plot", 5) == TOOLS[:3]


def test_select_tools_picks_relevant_in_original_order() -> None:
    chosen = select_tools(TOOLS, "plot a bar chart of the revenue dataframe columns", 3)
    assert "plot_chart" in names(chosen) and "inspect_dataframe" in names(chosen)
    assert names(chosen) == [n for n in names(TOOLS) if n in names(chosen)]
    assert len(chosen) == 3
    assert all(c is next(t for t in TOOLS if t["name"] == c["name"]) for c in chosen)


def test_select_tools_honours_always_and_is_deterministic() -> None:
    chosen = select_tools(TOOLS, "read the file sales.csv", 3, always=("read_artifact", "run_python"))
    assert names(chosen) == ["run_python", "read_file", "read_artifact"]
    again = select_tools(TOOLS, "read the file sales.csv", 3, always=("read_artifact", "run_python"))
    assert names(again) == names(chosen)
    # no match at all: ties go to the first tools, deterministically
    assert names(select_tools(TOOLS, "zzz qqq", 2)) == ["run_python", "read_file"]
    # more pinned tools than slots: all pinned ones are kept
    assert names(select_tools(TOOLS, "x", 1, always=("plot_chart", "search_web"))) == ["plot_chart", "search_web"]
