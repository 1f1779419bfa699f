"""%%compare and CompareResult: the math, the concurrency, the records (CompareView: tests/widgets)."""

from __future__ import annotations

import statistics
import sys
import threading

import pytest
from IPython.core.error import UsageError

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import TurnResult
from jupyter_brain.compare import (
    CompareResult,
    clone_provider,
    comparison_history,
    record_decision,
    run_comparison,
)
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.session import AgentOptions

ANSWERS = {
    "react": "Thought: multiply.\nFinal Answer: 42",
    "reflexion": "Plan: multiply.\nFinal Answer: 42",
    "cot": "Step 1: 6*7=42\nFinal Answer: 42",
    "tot": ("Candidate 1: multiply → Score: 0.9\nCandidate 2: add repeatedly → Score: 0.5\n"
            "Candidate 3: guess → Score: 0.1\nSelected: Candidate 1\nFinal Answer: 42"),
}


def row(strategy: str, run: int, status: str = "completed", **values) -> dict:
    base = dict(strategy=strategy, run=run, status=status, steps=1, tool_calls=0, reflections=0,
                input_tokens=100, output_tokens=10, cache_read_tokens=0, cache_creation_tokens=0,
                cost_usd=None, wall_s=1.0, error=None)
    return {**base, **values}


@pytest.fixture()
def log():
    with EventLog(":memory:") as event_log:
        yield event_log


# ── CompareResult ──────────────────────────────────────────────────────────
def test_summary_mean_and_spread():
    rows = [row("react", 1, steps=2, cost_usd=0.01), row("react", 2, steps=4, cost_usd=0.03),
            row("react", 3, steps=9, cost_usd=None, status="error"),
            row("cot", 1, steps=1, cost_usd=0.02), row("cot", 2, steps=1, cost_usd=0.02)]
    result = CompareResult(comparison_id="c", prompt="p", strategies=["react", "cot"], runs=3, rows=rows)
    react, cot = result.summary()
    assert react["runs"] == 3 and react["completed"] == 2
    assert react["steps"] == pytest.approx(5.0)
    assert react["steps_sd"] == pytest.approx(statistics.stdev([2, 4, 9]))
    assert react["cost_usd"] == pytest.approx(0.02)  # the run without a price is left out
    assert react["cost_usd_sd"] == pytest.approx(statistics.stdev([0.01, 0.03]))
    assert cot["steps_sd"] == 0.0 and cot["completed"] == 2
    assert result.best("steps") == "cot"


def test_single_run_has_no_spread():
    result = CompareResult(comparison_id="c", prompt="p", strategies=["cot"], rows=[row("cot", 1)])
    (cot,) = result.summary()
    assert cot["steps"] == 1.0 and "steps_sd" not in cot and cot["cost_usd"] is None


def test_repr_is_stable_and_dataframe_matches_rows(monkeypatch):
    result = CompareResult(comparison_id="c", prompt="p", strategies=["react", "cot"],
                           rows=[row("react", 1), row("cot", 1, status="error", error="boom")])
    assert repr(result) == "CompareResult(strategies=['react', 'cot'], runs=1, [react#1=completed, cot#1=error])"
    frame = result.to_dataframe()
    assert list(frame["strategy"]) == ["react", "cot"] and frame["error"].iloc[1] == "boom"
    assert list(frame.columns[:3]) == ["strategy", "run", "status"] and frame["error"].isna().iloc[0]
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="needs pandas"):
        result.to_dataframe()


# ── run_comparison ─────────────────────────────────────────────────────────
def test_runs_overlap(log):
    """Every run waits at one barrier inside its model call: sequential runs would break it."""
    strategies = ["react", "reflexion", "cot", "tot"]
    barrier = threading.Barrier(len(strategies) * 2, timeout=60)  # a bound only: together, all arrive at once
    threads: set[str] = set()

    def reply(strategy):
        def respond(messages, tools):
            threads.add(threading.current_thread().name)
            barrier.wait()
            return ANSWERS[strategy]
        return respond

    bots = {s: ScriptedProvider([reply(s)]) for s in strategies}
    result = run_comparison("What is 6*7?", strategies, lambda s, r: clone_provider(bots[s]), lambda: [],
                            AgentOptions(permission="read-only"), runs=2, event_log=log)
    assert [r["status"] for r in result.rows] == ["completed"] * 8, result.rows
    assert len(threads) == 8
    assert all(res.text.endswith("42") for runs in result.results.values() for res in runs)
    assert {r.session_id for runs in result.results.values() for r in runs} == {
        f"compare-{result.comparison_id}-{s}-{n}" for s in strategies for n in (1, 2)}


def test_scripted_provider_clone_replays_script_per_run(log):
    bot = ScriptedProvider(["first", "second"])
    a, b = clone_provider(bot), clone_provider(bot)
    assert a is not b and a is not bot
    result = run_comparison("q", ["react", "cot"], lambda s, r: clone_provider(bot), lambda: [],
                            AgentOptions(), event_log=log)
    assert [runs[0].text for runs in result.results.values()] == ["first", "first"]
    other = object.__new__(type("Remote", (), {}))
    assert clone_provider(other) is other  # real clients are shared


def test_a_failing_strategy_does_not_stop_the_others(log):
    def factory(strategy, run):
        if strategy == "cot":
            raise RuntimeError("no provider for cot")
        if strategy == "tot":
            return ScriptedProvider([{"error": "overloaded"}])
        return ScriptedProvider([ANSWERS[strategy]])

    finished = []
    result = run_comparison("q", ["react", "cot", "tot"], factory, lambda: [], AgentOptions(),
                            event_log=log, on_run_end=lambda r, res: finished.append(r["strategy"]))
    by = {r["strategy"]: r for r in result.rows}
    assert by["react"]["status"] == "completed"
    assert by["cot"]["status"] == "error" and by["cot"]["error"] == "RuntimeError: no provider for cot"
    assert by["tot"]["status"] != "completed" and by["tot"]["error"]
    assert sorted(finished) == ["cot", "react", "tot"]
    assert isinstance(result.results["cot"][0], TurnResult)


def test_cancel_stops_every_run(log):
    cancel = threading.Event()
    cancel.set()
    result = run_comparison("q", ["react", "cot"], lambda s, r: ScriptedProvider([ANSWERS[s]]), lambda: [],
                            AgentOptions(), event_log=log, cancel=cancel)
    assert [r["status"] for r in result.rows] == ["interrupted", "interrupted"]


def test_unknown_strategy_and_runs(log):
    with pytest.raises(ValueError, match="choose from react"):
        run_comparison("q", ["react", "magic"], lambda s, r: ScriptedProvider(["x"]), lambda: [],
                       AgentOptions(), event_log=log)
    with pytest.raises(ValueError, match="at least 1"):
        run_comparison("q", ["react"], lambda s, r: ScriptedProvider(["x"]), lambda: [],
                       AgentOptions(), runs=0, event_log=log)


def test_comparison_and_decision_records(log):
    result = run_comparison("q", ["react", "cot"], lambda s, r: ScriptedProvider([ANSWERS[s]]), lambda: [],
                            AgentOptions(), event_log=log)
    (past,) = comparison_history(log)
    assert past["comparison_id"] == result.comparison_id and past["winner"] is None
    assert [r["strategy"] for r in past["rows"]] == ["react", "cot"]
    record_decision(log, result.comparison_id, "react")
    record_decision(log, result.comparison_id, "cot")  # a change of mind: the latest wins
    assert comparison_history(log)[0]["winner"] == "cot"
    assert [d["strategy"] for d in log.records("decision")] == ["react", "cot"]


# ── the magic ──────────────────────────────────────────────────────────────


def compare(sh, line, cell="What is 6*7?"):
    return sh.run_cell_magic("compare", line, cell)


def test_magic_stores_result_and_lists_history(shell, capsys):
    shell.user_ns["bots"] = {s: ScriptedProvider([ANSWERS[s]]) for s in ANSWERS}
    compare(shell, "--strategies react,cot,tot --provider bots --out cmp")
    result = shell.user_ns["cmp"]
    assert result is shell.user_ns["_compare"]
    assert result.strategies == ["react", "cot", "tot"]
    assert all(r["status"] == "completed" for r in result.rows)
    out = capsys.readouterr().out
    assert "tot #1: completed" in out and "react" in out  # terminal: the text table
    shell.run_line_magic("agent", "compare-history")
    assert "winner: (not marked)" in capsys.readouterr().out
    magics = shell.magics_manager.registry["AgentMagics"]
    record_decision(magics.manager.event_log, result.comparison_id, "tot")
    shell.run_line_magic("agent", "compare-history")
    listed = capsys.readouterr().out
    assert "1. What is 6*7?" in listed
    assert "winner: tot" in listed and "react#1 completed" in listed


def test_compare_best_records_a_decision(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider(["Final Answer: 42"])
    with pytest.raises(UsageError, match="no comparisons yet"):
        shell.run_line_magic("agent", "compare-best react")
    compare(shell, "--strategies react,cot --provider bot", "first")
    compare(shell, "--strategies react,cot --provider bot", "second")
    shell.run_line_magic("agent", "compare-best cot")
    shell.run_line_magic("agent", "compare-best react 1")
    assert "comparison 1 (first): winner react" in capsys.readouterr().out
    shell.run_line_magic("agent", "compare-history")
    listed = capsys.readouterr().out
    assert listed.index("winner: react") < listed.index("2. second") < listed.index("winner: cot")
    magics = shell.magics_manager.registry["AgentMagics"]
    (second,) = [d for d in magics.manager.event_log.records("decision") if d["strategy"] == "cot"]
    assert second["comparison_id"] == shell.user_ns["_compare"].comparison_id and second["source"] == "magic"
    with pytest.raises(UsageError, match="ran react, cot, not 'tot'"):
        shell.run_line_magic("agent", "compare-best tot")
    with pytest.raises(UsageError, match="no comparison 3; use 1-2"):
        shell.run_line_magic("agent", "compare-best cot 3")


def test_magic_single_scripted_provider_is_cloned_per_strategy(shell):
    shell.user_ns["bot"] = ScriptedProvider(["Final Answer: 42"])
    compare(shell, "--strategies react,cot --provider bot --runs 2")
    result = shell.user_ns["_compare"]
    assert [r.text for runs in result.results.values() for r in runs] == ["42"] * 4  # the answer, not its label (#40)


def test_magic_runs_see_the_same_fresh_workspace(shell):
    seen: list = []  # scripted providers are copied per run; the callable is shared

    def answer(messages, tools):
        seen.append(messages)
        return "Final Answer: 1"

    shell.user_ns.update(bot=ScriptedProvider([answer]), revenue_by_month={"Jan": 1})
    compare(shell, "--strategies react,cot --provider bot")
    assert len(seen) == 2
    for messages in seen:
        (workspace,) = [m for m in messages if m.get("kind") == "workspace"]
        assert "- revenue_by_month: dict — len 1" in workspace["content"]


def test_magic_defaults_to_read_only_tools(shell):
    code = {"name": "run_python", "arguments": {"code": "touched = True"}}
    script = [{"text": "Action: run_python", "tool_calls": [code]}, "Final Answer: done"]
    shell.user_ns["bot"] = ScriptedProvider(script)
    compare(shell, "--strategies react --provider bot")
    (run,) = shell.user_ns["_compare"].results["react"]
    assert run.tool_calls[0].status != "ok" and "touched" not in shell.user_ns
    compare(shell, "--strategies react --provider bot --permission auto")
    (run,) = shell.user_ns["_compare"].results["react"]
    # The run wrote into its own copy of the namespace, never into the user's (#27).
    assert run.tool_calls[0].status == "ok" and "touched" not in shell.user_ns
    assert shell.user_ns["_compare"].namespace("react")["touched"] is True


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("--strategies react,magic", "unknown strategy 'magic'; choose from react, reflexion, cot, tot, none"),
        ("--strategies react,react", "listed twice"),
        ("--runs 0", "must be at least 1"),
        ("--permission ask", "invalid choice: 'ask'"),
        ("--think huge", "invalid choice: 'huge'"),
        ("--out 1x --provider bot", "--out needs a variable name"),
        ("--provider missing_map", "%%compare: unknown provider 'missing_map'"),
        ("--provider partial --strategies react,cot", "'partial' has no provider for cot"),
        ("--provider wrong --strategies react", "wrong['react'] is a int, not an LLM provider"),
    ],
)
def test_magic_flag_errors(shell, line, needle):
    shell.user_ns.update(bot=ScriptedProvider(["x"]), partial={"react": ScriptedProvider(["x"])},
                         wrong={"react": 3})
    with pytest.raises(UsageError) as info:
        compare(shell, line)
    assert needle in str(info.value)


def test_magic_needs_a_prompt(shell):
    shell.user_ns["bot"] = ScriptedProvider(["x"])
    with pytest.raises(UsageError, match="write the prompt"):
        compare(shell, "--provider bot", "   ")


def test_magic_builds_a_named_provider_per_run(shell, monkeypatch):
    import jupyter_brain.providers.registry as registry

    built: list[ScriptedProvider] = []

    def fake_get_provider(name, model=None):
        assert name == "scripted"
        built.append(ScriptedProvider(["Final Answer: 42"]))
        return built[-1]

    monkeypatch.setattr(registry, "get_provider", fake_get_provider)
    compare(shell, "--strategies react,cot --runs 2 --provider scripted")
    assert len(built) == 1 + 4  # one check before the runs, then one per run
    assert all(len(p.calls) == 1 for p in built[1:]) and built[0].calls == []
