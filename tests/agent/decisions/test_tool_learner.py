"""ToolUsageLearner: it remembers the tools that ran ok per question, and semantic tool
selection ranks tools that helped on similar questions higher."""

from __future__ import annotations

from jupyter_brain.agent.context.selection import select_tools
from jupyter_brain.agent.decisions import AutonomousResearchLearner, ToolUsageLearner
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.results import ToolCallRecord, TurnResult
from jupyter_brain.agent.tools import AgentToolRegistry, ToolSpec, tool
from jupyter_brain.providers.scripted import ScriptedProvider


def turn(question: str, *calls: tuple[str, str], status: str = "completed") -> TurnResult:
    return TurnResult(
        session_id="s", turn_id="t", status=status, text="",  # type: ignore[arg-type]
        new_messages=[{"role": "user", "content": question}],
        tool_calls=[ToolCallRecord(call_id=f"c{i}", name=name, status=st) for i, (name, st) in enumerate(calls)],
    )


def schema(name: str, description: str) -> dict:
    return {"name": name, "description": description, "input_schema": {"type": "object", "properties": {}}}


TOOLS = [  # query_warehouse last: on a tie (no shared words) the earlier tools win
    schema("plot_line", "Draw a line chart of a column"),
    schema("send_email", "Send an email message"),
    schema("read_csv", "Read a CSV file into a table"),
    schema("list_files", "List the files of a folder"),
    schema("churn_glossary", "Definitions of churn and retention terms"),
    schema("query_warehouse", "Run SQL against the data warehouse"),
]


def test_observe_keeps_ok_tools_of_answered_turns_only():
    learner = ToolUsageLearner()
    assert isinstance(learner, AutonomousResearchLearner)
    learner.observe(turn("How did churn move last quarter?", ("query_warehouse", "ok"), ("plot_line", "error"),
                         ("read_artifact", "ok"), ("query_warehouse", "ok")))
    learner.observe(turn("revenue by region please", ("read_csv", "ok"), status="max_steps"))  # no answer
    learner.observe(turn("just chatting"))  # no tools
    learner.observe(turn("what is it?", ("read_csv", "ok")))  # only stopwords: nothing to match on
    (example,) = learner.examples
    assert example.question == "How did churn move last quarter?" and example.tools == ("query_warehouse",)
    assert ToolUsageLearner(only_completed=False).observe(turn("revenue by region", ("read_csv", "ok"))) is None


def test_boosts_go_to_tools_of_similar_questions():
    learner = ToolUsageLearner()
    learner.learn("How did churn move last quarter?", ["query_warehouse"])
    learner.learn("email the weekly summary to the team", ["send_email"])
    boosts = learner.tool_boosts("how did churn move this quarter")
    assert set(boosts) == {"query_warehouse"} and 0.3 < boosts["query_warehouse"] <= 1.0
    identical = learner.tool_boosts("How did churn move last quarter?")
    assert identical["query_warehouse"] == 1.0  # capped at one full weight
    assert learner.tool_boosts("list the files of my folder") == {}
    assert learner.tool_boosts("") == {}
    assert ToolUsageLearner(weight=0.5).tool_boosts("anything") == {}
    half = ToolUsageLearner(weight=0.5)
    half.learn("How did churn move last quarter?", ["query_warehouse"])
    assert half.tool_boosts("How did churn move last quarter?") == {"query_warehouse": 0.5}


def test_boosts_change_the_selection():
    question = "how did churn move this quarter"
    plain = [s["name"] for s in select_tools(TOOLS, question, 2)]
    assert "query_warehouse" not in plain  # no shared words with its description
    learner = ToolUsageLearner()
    learner.learn("How did churn move last quarter?", ["query_warehouse"])
    boosted = [s["name"] for s in select_tools(TOOLS, question, 2, boosts=learner.tool_boosts(question))]
    assert "query_warehouse" in boosted and "churn_glossary" in boosted  # the lexical best match stays
    assert select_tools(TOOLS, question, 2, boosts={}) == select_tools(TOOLS, question, 2)


def test_learning_persists_in_sqlite(tmp_path):
    path = tmp_path / "events.sqlite"
    with EventLog(path) as log:
        ToolUsageLearner(log).observe(turn("How did churn move last quarter?", ("query_warehouse", "ok")))
    with EventLog(path) as log:
        again = ToolUsageLearner(log)
        assert [e.tools for e in again.examples] == [("query_warehouse",)]
        assert "query_warehouse" in again.tool_boosts("churn this quarter")
    assert len(ToolUsageLearner(path, max_examples=1)) == 1


def _spec(s: dict) -> ToolSpec:
    def fn() -> str:
        return "rows: 3"

    fn.__name__ = s["name"]
    fn.__doc__ = s["description"]
    return tool(fn)


def test_the_harness_learns_from_its_turns_and_offers_what_helped():
    learner = ToolUsageLearner()
    provider = ScriptedProvider([
        {"text": "", "tool_calls": [{"name": "query_warehouse", "arguments": {}}]}, "Churn fell 2%.",
        "Churn fell again.",
    ])
    harness = AgentHarness(provider, AgentToolRegistry([_spec(s) for s in TOOLS]), EventLog(":memory:"),
                           autonomous_research_learner=learner, enable_semantic_selection=True, max_tools_per_turn=3)
    question = "how did churn move this quarter"
    before = [s["name"] for s in harness.offered_tools([], question)]
    assert "query_warehouse" not in before
    # The first turn is asked so that the tool is offered (its own words), and it helps.
    first = harness.run_turn("s", [], "How did churn move? query the warehouse")
    assert [c.status for c in first.tool_calls] == ["ok"] and len(learner) == 1
    after = [s["name"] for s in harness.offered_tools([], question)]
    assert "query_warehouse" in after and len(after) == 3  # read_artifact: once a result names an artifact
    second = harness.run_turn("s2", [], question)
    offered = [t["name"] for t in provider.calls[-1]["tools"]]
    assert second.status == "completed" and "query_warehouse" in offered
