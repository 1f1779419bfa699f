"""Deferred tools (issue #26): a turn is offered the tools its prompt likely needs plus
``find_tools``; the others are loaded on request, within the same turn, so nothing the
agent could do is lost."""

from __future__ import annotations

from pydantic import BaseModel

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tool_deferral import DeferredTools
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.foundation.tokens import TokenCounter
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.session import Session
from jupyter_brain.settings_model import AgentOptions
from jupyter_brain.tools import default_tools


def _call(name: str, **arguments) -> dict:
    return {"text": "", "tool_calls": [{"name": name, "arguments": arguments}]}


def _offered(call: dict) -> list[str]:
    return [t["name"] for t in call["tools"]]


@tool
def revenue_by_month(year: int) -> str:
    """Revenue of each month of a year."""
    return f"{year}: Jan 10, Feb 12"


@tool
def weather_today(city: str) -> str:
    """Today's weather in a city."""
    return f"{city}: sunny"


@tool
def translate_text(text: str, language: str) -> str:
    """Translate a text into another language."""
    return f"[{language}] {text}"


def _harness(provider: ScriptedProvider, max_tools: int = 1, **kwargs) -> AgentHarness:
    registry = AgentToolRegistry([revenue_by_month, weather_today, translate_text])
    return AgentHarness(provider, registry, EventLog(":memory:"), enable_semantic_selection=True,
                        max_tools_per_turn=max_tools, **kwargs)


def test_a_turn_finds_a_deferred_tool_and_uses_it_in_the_same_turn():
    provider = ScriptedProvider([_call("find_tools", query="translate_text"),
                                 _call("translate_text", text="hello", language="fr"), "Bonjour."])
    result = _harness(provider).run_turn("s", [], "How was revenue by month in 2024?")
    first, second, third = (_offered(c) for c in provider.calls)
    assert first == ["revenue_by_month", "find_tools"]  # the relevant one, the rest deferred
    find = next(t for t in provider.calls[0]["tools"] if t["name"] == "find_tools")
    assert "weather_today" in find["description"] and "translate_text" in find["description"]
    assert "translate_text" in second and "weather_today" not in second  # loaded for the next request
    assert third == second
    assert result.status == "completed" and result.text == "Bonjour."
    assert [(c.name, c.status) for c in result.tool_calls] == [("find_tools", "ok"), ("translate_text", "ok")]
    assert "translate_text" in result.tool_calls[0].output
    assert result.tool_calls[1].output == "[fr] hello"


def test_find_tools_by_need_loads_the_best_matches():
    provider = ScriptedProvider([_call("find_tools", query="what is the weather in a city"), "Sunny."])
    result = _harness(provider).run_turn("s", [], "revenue by month")
    assert "weather_today" in _offered(provider.calls[1])
    assert "weather_today" in result.tool_calls[0].output


def test_find_tools_says_what_exists_when_nothing_matches():
    deferred = DeferredTools([revenue_by_month.schema(), weather_today.schema()])
    answer = deferred.find("zzz")
    assert "No tool matches" in answer and "revenue_by_month" in answer and not deferred.take_loaded()
    deferred.find("weather_today")
    assert "Already offered: weather_today" in deferred.find("weather_today")


def test_a_deferred_tool_called_directly_runs_and_is_offered_from_then_on():
    provider = ScriptedProvider([_call("weather_today", city="Oslo"), "Sunny in Oslo."])
    result = _harness(provider).run_turn("s", [], "revenue by month")
    assert "weather_today" not in _offered(provider.calls[0])
    assert result.tool_calls[0].status == "ok" and result.tool_calls[0].output == "Oslo: sunny"
    assert "weather_today" in _offered(provider.calls[1])


def test_read_artifact_is_offered_once_a_result_names_an_artifact():
    @tool
    def big_table() -> str:
        """A large table."""
        return "row\n" * 10_000

    provider = ScriptedProvider([_call("big_table"), "Done."])
    registry = AgentToolRegistry([big_table, weather_today, translate_text])
    harness = AgentHarness(provider, registry, EventLog(":memory:"), enable_semantic_selection=True,
                           max_tools_per_turn=1)
    harness.run_turn("s", [], "show the big table")
    assert "read_artifact" not in _offered(provider.calls[0])
    assert "read_artifact" in _offered(provider.calls[1])


def test_every_tool_is_offered_without_selection_and_no_find_tools():
    provider = ScriptedProvider(["ok"])
    registry = AgentToolRegistry([revenue_by_month, weather_today, translate_text])
    AgentHarness(provider, registry, EventLog(":memory:")).run_turn("s", [], "hi")
    assert _offered(provider.calls[0]) == ["revenue_by_month", "weather_today", "translate_text", "read_artifact"]


def _session_turn(tmp_path, script, options: AgentOptions, overrides=None, approver=None):
    provider = ScriptedProvider(script)
    session = Session("s", EventLog(":memory:"))
    session.overrides.update(overrides or {})
    tools = default_tools({}, tmp_path)
    harness = session.build_harness(provider, tools, options, approver=approver, working_directory=str(tmp_path))
    result = session.run("Which region sold most in sales.csv?", harness)
    return provider, result, harness


def test_the_default_notebook_turn_offers_fewer_tools_and_fewer_tool_tokens(tmp_path):
    defaults = AgentOptions()
    assert defaults.max_tools > 0  # selection with deferral is the default
    provider, result, harness = _session_turn(tmp_path, ["ok"], defaults)
    offered = provider.calls[0]["tools"]
    every = harness.tools.schemas()
    names = [t["name"] for t in offered]
    assert "run_python" in names and "read_file" in names and names[-1] == "find_tools"
    assert len(names) == defaults.max_tools + 1 < len(every)
    counter = TokenCounter()
    assert counter.count_tools(offered) < 0.6 * counter.count_tools(every)


def test_every_tool_and_no_find_tools_with_max_tools_0(tmp_path):
    provider, _, harness = _session_turn(tmp_path, ["ok"], AgentOptions(max_tools=0))
    assert _offered(provider.calls[0]) == [t["name"] for t in harness.tools.schemas()]


def test_an_allowed_deferred_tool_runs_without_asking(tmp_path):
    asked: list[str] = []

    def approver(call, spec, arguments):
        asked.append(call.name)
        raise AssertionError("an allowed tool must not ask")

    script = [_call("find_tools", query="write_file"), _call("write_file", path="out.md", content="# hi"), "Saved."]
    provider, result, _ = _session_turn(tmp_path, script, AgentOptions(permission="ask"),
                                        overrides={"write_file": "allow"}, approver=approver)
    assert "write_file" not in _offered(provider.calls[0]) and "write_file" in _offered(provider.calls[1])
    assert [c.status for c in result.tool_calls] == ["ok", "ok"] and not asked
    assert (tmp_path / "out.md").read_text() == "# hi"


def test_a_denied_deferred_tool_stays_denied_once_loaded(tmp_path):
    script = [_call("find_tools", query="write_file"), _call("write_file", path="out.md", content="x"), "No."]
    _, result, _ = _session_turn(tmp_path, script, AgentOptions(permission="auto"), overrides={"write_file": "deny"})
    assert [c.status for c in result.tool_calls] == ["ok", "denied"] and not (tmp_path / "out.md").exists()


def test_a_second_turn_builds_no_tool_schema(tmp_path, monkeypatch):
    """The built-in tools are fresh closures every cell; their argument models and JSON
    schemas are built once per process (tool_models.py, ToolSpec.input_schema)."""
    built: list[str] = []
    original = BaseModel.model_json_schema.__func__  # type: ignore[attr-defined]

    def counting(cls, *args, **kwargs):
        built.append(cls.__name__)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(BaseModel, "model_json_schema", classmethod(counting))
    _session_turn(tmp_path, [_call("list_files"), "ok"], AgentOptions(max_tools=0))
    built.clear()
    provider, result, _ = _session_turn(tmp_path, [_call("list_files"), "ok"], AgentOptions(max_tools=0))
    assert result.status == "completed" and len(provider.calls[0]["tools"]) >= 9
    assert built == []
