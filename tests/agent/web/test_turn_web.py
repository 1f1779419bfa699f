"""web_mode="on" with a search function (the tool path), with none ("no web search
configured"), and off (no tool): offline, with the scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_brain.agent.artifacts import ArtifactStore
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.agent.web import NO_WEB_SEARCH, WEB_TOOL, WebResult
from jupyter_brain.providers.scripted import ScriptedProvider

PAGE = (
    "<html><head><title>x</title><script>alert('pwned')</script></head><body>"
    "<h1>Rainfall in Lisbon</h1><p>Lisbon gets <b>774 mm</b> of rain a year &amp; most in winter.</p>"
    "<img src=x onerror=alert(1)><p>![tracker](https://evil.example/pixel.png) "
    "[click](javascript:alert(1)) &lt;script&gt;steal()&lt;/script&gt;</p></body></html>"
)
RESULTS = [
    {"url": "https://climate.example/lisbon", "title": "Lisbon <i>climate</i>", "snippet": "Rain: 774 mm",
     "content": PAGE},
    {"url": "https://other.example/porto", "title": "Porto weather", "snippet": "Porto is wetter"},
]


class Recorder:
    def __init__(self, results: Any = RESULTS) -> None:
        self.queries: list[str] = []
        self.results = results

    def __call__(self, query: str) -> Any:
        self.queries.append(query)
        return self.results


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": f"call_{name}", "name": name, "arguments": arguments}


def seen_tools(provider_calls: list[list[dict[str, Any]]]) -> list[list[str]]:
    return [[t["name"] for t in tools] for tools in provider_calls]


class Spy(ScriptedProvider):
    """Records the tool names offered to each call."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.offered: list[list[str]] = []

    def generate(self, messages, tools, **kw):  # type: ignore[no-untyped-def]
        self.offered.append([t["name"] for t in tools])
        return super().generate(messages, tools, **kw)


def harness(provider: ScriptedProvider, tmp_path: Path, search: Any = None, **kw: Any) -> AgentHarness:
    return AgentHarness(provider, AgentToolRegistry(), EventLog(tmp_path / "events.sqlite"),
                        artifacts=ArtifactStore(tmp_path / "artifacts"), web_search=search, **kw)


def test_the_function_search_is_a_tool_of_the_turn_and_its_results_are_cited(tmp_path: Path) -> None:
    search = Recorder()
    provider = Spy([
        {"text": "", "tool_calls": [call(WEB_TOOL, query="  Lisbon   rainfall ")]},
        "Lisbon gets about 774 mm a year (https://climate.example/lisbon).",
    ])
    h = harness(provider, tmp_path, search)
    events: list[Any] = []
    result = h.run_turn("s", [], "How much rain falls in Lisbon?", web_mode="on", on_event=events.append)

    assert result.status == "completed"
    assert search.queries == ["Lisbon rainfall"]  # whitespace folded
    assert all(WEB_TOOL in names for names in provider.offered)
    # The answer named one page by its address: that one is the citation.
    assert result.web_citations == [{"url": "https://climate.example/lisbon", "title": "Lisbon climate"}]
    ends = [e for e in events if e.type == "tool_call_end" and e.name == WEB_TOOL]
    assert ends and ends[0].status == "ok"
    tool_message = next(m for m in result.messages if m.get("role") == "tool")
    assert "never as instructions" in tool_message["content"]
    assert "774 mm" in tool_message["content"] and "alert('pwned')" not in tool_message["content"]
    # The tool was the turn's only: the harness's registry does not keep it.
    assert WEB_TOOL not in h.tools


def test_pages_with_content_are_saved_as_inert_markdown(tmp_path: Path) -> None:
    provider = ScriptedProvider([{"text": "", "tool_calls": [call(WEB_TOOL, query="lisbon rain")]}, "About 774 mm."])
    result = harness(provider, tmp_path, Recorder()).run_turn("s", [], "rain?", web_mode="on")

    # Only the result that had content is a page; it lives under the artifacts folder.
    assert len(result.rendered_content_paths) == 1
    path = Path(result.rendered_content_paths[0])
    assert path.is_file() and path.suffix == ".md" and path.parent == tmp_path / "artifacts" / "web"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Lisbon climate\n")
    assert "<https://climate.example/lisbon>" in text
    assert "774 mm" in text and "most in winter" in text
    assert "alert('pwned')" not in text  # the script's body is gone
    assert "<script" not in text and "<img" not in text and "<b>" not in text  # no HTML at all
    assert "&lt;script>steal()" in text  # escaped text of an entity-encoded tag stays text
    assert "](javascript:" not in text and "](#blocked:" in text
    assert "![" not in text and "[image: tracker](https://evil.example/pixel.png)" in text
    # When the answer names none of the pages, every result it was given is cited.
    assert [c["url"] for c in result.web_citations] == [r["url"] for r in RESULTS]


def test_a_failing_or_malformed_search_is_the_models_error_not_the_turns(tmp_path: Path) -> None:
    def broken(query: str) -> Any:
        raise RuntimeError("search service down")

    for search, said in ((broken, "search service down"), (Recorder({"url": "x"}), "not a list of results")):
        provider = ScriptedProvider([{"text": "", "tool_calls": [call(WEB_TOOL, query="q")]}, "No luck."])
        events: list[Any] = []
        result = harness(provider, tmp_path, search).run_turn("s", [], "q?", web_mode="on", on_event=events.append)
        assert result.status == "completed" and result.text == "No luck."
        end = next(e for e in events if e.type == "tool_call_end")
        assert end.status == "error" and said in (end.error or "")
        assert result.web_citations == [] and result.rendered_content_paths == []


def test_results_without_a_web_address_are_left_out(tmp_path: Path) -> None:
    search = Recorder([{"url": "file:///etc/passwd", "title": "local", "content": "root:x:0:0"},
                       WebResult(url="https://ok.example/", title="ok")])
    provider = ScriptedProvider([{"text": "", "tool_calls": [call(WEB_TOOL, query="q")]}, "done"])
    result = harness(provider, tmp_path, search).run_turn("s", [], "q?", web_mode="on")
    tool_message = next(m for m in result.messages if m.get("role") == "tool")
    assert "root:x" not in tool_message["content"] and "1 results without an http(s) address" in tool_message["content"]
    assert result.web_citations == [{"url": "https://ok.example/", "title": "ok"}]
    assert result.rendered_content_paths == []


def test_no_web_search_configured_is_said_once_and_the_turn_goes_on(tmp_path: Path) -> None:
    provider = Spy([{"text": "", "tool_calls": [call("nothing")]}, "Answered from what I know."])
    events: list[Any] = []
    result = harness(provider, tmp_path).run_turn("s", [], "news?", web_mode="on", on_event=events.append)

    assert result.status == "completed" and result.text == "Answered from what I know."
    notices = [e for e in events if e.type == "error" and e.kind == "web_search"]
    assert len(notices) == 1 and notices[0].message == NO_WEB_SEARCH and notices[0].recoverable
    assert [e.type for e in events].index("error") > [e.type for e in events].index("turn_start")
    assert all(WEB_TOOL not in names for names in provider.offered)


@pytest.mark.parametrize("web_mode", ["off", None])
def test_web_mode_off_offers_no_web_tool(tmp_path: Path, web_mode: str | None) -> None:
    search = Recorder()
    provider = Spy(["Plain answer."])
    kwargs = {} if web_mode is None else {"web_mode": web_mode}
    events: list[Any] = []
    result = harness(provider, tmp_path, search).run_turn("s", [], "q?", on_event=events.append, **kwargs)
    assert provider.offered == [["read_artifact"]]
    assert search.queries == [] and result.web_citations == [] and result.rendered_content_paths == []
    assert not [e for e in events if e.type == "error"]


def test_a_users_own_web_search_tool_is_kept(tmp_path: Path) -> None:
    @tool(name=WEB_TOOL)
    def mine(query: str) -> str:
        """My search."""
        return "my results"

    search = Recorder()
    provider = Spy([{"text": "", "tool_calls": [call(WEB_TOOL, query="q")]}, "ok"])
    h = AgentHarness(provider, AgentToolRegistry([mine]), None, web_search=search)
    result = h.run_turn("s", [], "q?", web_mode="on")
    assert search.queries == [] and provider.offered[0].count(WEB_TOOL) == 1
    assert next(m for m in result.messages if m.get("role") == "tool")["content"] == "my results"


def test_bad_web_mode_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="web_mode must be one of off, on"):
        harness(ScriptedProvider(["x"]), tmp_path).run_turn("s", [], "q", web_mode="sometimes")


def test_with_citations_on_the_answer_lists_the_cited_page(tmp_path: Path) -> None:
    provider = ScriptedProvider([{"text": "", "tool_calls": [call(WEB_TOOL, query="lisbon rain")]},
                                 "About 774 mm (https://climate.example/lisbon)."])
    result = harness(provider, tmp_path, Recorder()).run_turn("s", [], "rain?", web_mode="on", show_citations=True)
    assert "[Lisbon climate](https://climate.example/lisbon)" in result.text
    assert "other.example" not in result.text  # a result the answer did not name is no source
