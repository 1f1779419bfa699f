"""Citations: which workspace anchors an answer cites (context pack passages it used, what
the tools read, the variables inspected), the Sources section and the Citations event."""

from __future__ import annotations

from pathlib import Path

from jupyter_brain.agent.citations import pack_citations, sources_markdown, tool_citations, workspace_relative
from jupyter_brain.agent.events import Citations, TurnEnd
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.hooks import TurnContext, TurnHook
from jupyter_brain.agent.results import ToolCallRecord
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.scripted import ScriptedProvider

PACK = {"query": "q", "passages": [
    {"anchor": "sales.py:8", "path": "sales.py", "text": "def revenue_by_region(df):\n    return df.groupby('region')",
     "score": 2.0},
    {"anchor": "sales.py:40", "path": "sales.py", "text": "def margin(df): ...", "score": 1.5},
    {"anchor": "nb.ipynb#cell-3", "path": "nb.ipynb", "text": "forecast = np.polyfit(x, y, 2)", "score": 1.0},
]}


def _call(name: str, arguments: dict, output: str = "", status: str = "ok") -> ToolCallRecord:
    return ToolCallRecord(call_id=name, name=name, arguments=arguments, status=status, output=output)


def test_passages_the_answer_names_or_quotes_are_cited() -> None:
    assert pack_citations(PACK, "See sales.py:40 for the margin.") == ["sales.py:40"]
    assert pack_citations(PACK, "The notebook nb.ipynb fits a curve.") == ["nb.ipynb#cell-3"]
    assert pack_citations(PACK, "It does `return df.groupby('region')` there.") == ["sales.py:8"]
    # The file named without an anchor: each of its passages.
    assert pack_citations(PACK, "Both functions live in sales.py.") == ["sales.py:8", "sales.py:40"]


def test_an_answer_that_points_at_none_cites_every_passage_sent() -> None:
    assert pack_citations(PACK, "Revenue grew.") == ["sales.py:8", "sales.py:40", "nb.ipynb#cell-3"]
    assert pack_citations(None, "x") == [] and pack_citations({"passages": []}, "x") == []


def test_a_file_name_inside_another_word_is_not_a_mention() -> None:
    pack = {"passages": [{"anchor": "a.py:1", "path": "a.py", "text": "x"},
                         {"anchor": "data.py:1", "path": "data.py", "text": "y"}]}
    assert pack_citations(pack, "look at data.py") == ["data.py:1"]


def test_what_the_tools_read_is_cited(tmp_path: Path) -> None:
    calls = [
        _call("read_file", {"path": "./data/report.md", "start_line": 20}),
        _call("read_file", {"path": "analysis.ipynb"}),
        _call("read_file", {"path": str(tmp_path / "abs.txt")}),
        _call("read_file", {"path": "failed.md"}, status="error"),
        _call("read_file", {"path": "../outside.md"}),
        _call("inspect_variable", {"name": "df"}),
        _call("search_files", {"query": "churn"}, "notes.md:3: churn is 4%\nother.md:9: churn\n[2 matches]"),
        _call("list_files", {"path": "."}, "notes.md"),
    ]
    cited = tool_citations(calls, "Churn is 4% (notes.md).", tmp_path)
    assert cited == ["data/report.md:20", "analysis.ipynb", "abs.txt:1", "variable:df", "notes.md:3"]


def test_paths_outside_the_workspace_are_never_cited(tmp_path: Path) -> None:
    assert workspace_relative("/etc/passwd", tmp_path) is None
    assert workspace_relative("a/../../b", tmp_path) is None
    assert workspace_relative("a/./b.md", tmp_path) == "a/b.md"
    assert workspace_relative(42, tmp_path) is None and workspace_relative(".", tmp_path) is None


def test_sources_markdown_lists_anchors_and_safe_web_links() -> None:
    text = sources_markdown(["a.py:3", "variable:df"], [
        {"url": "https://example.com/page", "title": "Example [page]"},
        {"url": "javascript:alert(1)", "title": "bad"},
    ])
    assert text == ("**Sources**\n\n- `a.py:3`\n- `variable:df`\n"
                    "- [Example  page ](https://example.com/page)")
    assert sources_markdown([], []) == ""


@tool
def read_file(path: str, start_line: int = 1) -> str:
    """Read a file."""
    return "1: total = 10"


class WebFinds(TurnHook):
    """Stands in for the web search integration, which fills the turn's web sources while it runs."""

    def __init__(self, web: list[dict[str, str]]) -> None:
        self.web = web

    def turn_start(self, ctx: TurnContext) -> None:
        ctx.sources.web[:] = self.web


def _turn(tmp_path: Path, show: bool, web: list | None = None):
    (tmp_path / "totals.md").write_text("# Totals\n\nThe grand total is 10 units.\n", encoding="utf-8")
    bot = ScriptedProvider([{"text": "", "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
                            "The total is 10 (totals.md)."])
    events: list = []
    harness = AgentHarness(bot, AgentToolRegistry([read_file]), None, working_directory=str(tmp_path),
                           hooks=[WebFinds(web or [])])
    result = harness.run_turn("s", [], "What is the grand total?", top_k=2, show_citations=show,
                              on_event=events.append)
    return result, events


def test_with_citations_the_answer_ends_with_its_sources(tmp_path: Path) -> None:
    result, events = _turn(tmp_path, True)
    assert result.local_citations == ["totals.md:1", "calc.py:1"]
    assert result.text == "The total is 10 (totals.md).\n\n**Sources**\n\n- `totals.md:1`\n- `calc.py:1`"
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("Citations") == kinds.index("TurnEnd") - 1
    (cited,) = [e for e in events if isinstance(e, Citations)]
    assert cited.local == result.local_citations and cited.web == []
    (end,) = [e for e in events if isinstance(e, TurnEnd)]
    assert end.text == result.text
    assert result.messages[-1]["content"] == "The total is 10 (totals.md)."  # the history keeps the answer only


def test_without_citations_nothing_changes(tmp_path: Path) -> None:
    result, events = _turn(tmp_path, False)
    assert result.text == "The total is 10 (totals.md)." and result.local_citations == []
    assert not any(isinstance(e, Citations) for e in events)


def test_web_citations_join_the_sources_and_the_event(tmp_path: Path) -> None:
    web = [{"url": "https://docs.example.org/totals", "title": "Totals guide"}]
    result, events = _turn(tmp_path, True, web)
    assert result.text.endswith("- `calc.py:1`\n- [Totals guide](https://docs.example.org/totals)")
    (cited,) = [e for e in events if isinstance(e, Citations)]
    assert cited.web == web and result.web_citations == web
