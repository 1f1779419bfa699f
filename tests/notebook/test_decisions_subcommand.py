"""``%agent decisions``, ``jupyter_brain.decisions()`` and %%compare's "Mark best" in the
decision store (jupyter_brain/notebook/subcommands/decisions.py, compare.record_decision)."""

from __future__ import annotations

import re

import pytest
from IPython.core.error import UsageError

import jupyter_brain
from jupyter_brain.agent.decisions import SQLiteDecisionStore, default_decision_store
from jupyter_brain.agent.events import EventLog
from jupyter_brain.compare import record_decision, run_comparison
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.settings_model import AgentOptions
from jupyter_brain.widgets.compare_view import CompareView


def store_of(shell) -> SQLiteDecisionStore:
    store = default_decision_store(shell.magics_manager.registry["AgentMagics"].manager.event_log)
    assert store is not None
    return store


def test_each_cell_records_a_decision_and_the_subcommand_lists_them(shell, capsys):
    shell.run_line_magic("agent", "decisions")
    assert "no decisions yet in this event log" in capsys.readouterr().out
    shell.user_ns["bot"] = ScriptedProvider([
        {"text": "", "tool_calls": [{"name": "list_variables", "arguments": {}}]}, "No variables yet.", "Second.",
    ])
    shell.run_cell_magic("agent", "--provider bot --strategy react", "which variables are there?")
    shell.run_cell_magic("agent", "--provider bot --max-steps 3", "and now?")
    capsys.readouterr()
    shell.run_line_magic("agent", "decisions")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:6] == ["when", "session", "kind", "model", "strategy", "think"]
    assert "why" in lines[0] and len(lines) == 4
    first, second = lines[1], lines[2]
    assert " default " in first and " turn " in first and "scripted/scripted" in first and "ReAct" in first
    assert "completed" in first and "list_variables" in first and "answered after 1 tool call" in first
    assert re.search(r"  1/\d+ list_variables  ", first)  # tools used / offered
    assert " 0/" in second and second.endswith("answered")
    assert lines[3] == "as a DataFrame: jupyter_brain.decisions().to_dataframe()"
    shell.run_line_magic("agent", "decisions 1")
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and out[1].endswith("answered")
    shell.run_line_magic("agent", "decisions --session elsewhere")
    assert "no decisions yet in session elsewhere" in capsys.readouterr().out
    records = store_of(shell).records("default")
    assert [r.status for r in records] == ["completed", "completed"]
    assert records[0].tools_used == ["list_variables"] and records[0].strategy == "ReAct"

    frame = jupyter_brain.decisions().to_dataframe()
    assert list(frame["session_id"]) == ["default", "default"] and list(frame["steps"]) == [2, 1]
    assert len(jupyter_brain.decisions(1)) == 1 and jupyter_brain.decisions(kind="compare_best") == []


@pytest.mark.parametrize("line", ["decisions x", "decisions 0", "decisions 3 4", "decisions --session",
                                  "decisions --all"])
def test_bad_arguments_are_usage_errors(shell, line):
    with pytest.raises(UsageError, match="decisions"):
        shell.run_line_magic("agent", line)


def test_decisions_without_the_extension_says_what_to_do(monkeypatch):
    monkeypatch.setattr("IPython.get_ipython", lambda: None)
    with pytest.raises(RuntimeError, match="%load_ext jupyter_brain"):
        jupyter_brain.decisions()


def test_mark_best_from_the_magic_is_a_compare_best_decision(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider(["Final Answer: 42"])
    shell.run_cell_magic("compare", "--strategies react,cot --provider bot", "What is 6*7?")
    shell.run_line_magic("agent", "compare-best cot")
    capsys.readouterr()
    (best,) = store_of(shell).records(kind="compare_best")
    comparison_id = shell.user_ns["_compare"].comparison_id
    assert (best.session_id, best.turn_id, best.strategy) == (f"compare-{comparison_id}", comparison_id, "cot")
    assert best.status == "completed" and best.stop_reason == "marked best by magic"
    assert best.detail["strategies"] == ["react", "cot"] and best.detail["winner"] == "cot"
    assert best.detail["prompt"] == "What is 6*7?"
    assert [c["strategy"] for c in best.detail["compared"]] == ["react", "cot"]
    # Each compared run was a turn: recorded too, under its own session.
    turns = store_of(shell).records(kind="turn")
    assert sorted(r.strategy or "" for r in turns) == ["Chain-of-Thought", "ReAct"]
    shell.run_line_magic("agent", "decisions 1")
    row = capsys.readouterr().out.splitlines()[1]
    assert "compare_best" in row and "best of react, cot (What is 6*7?)" in row


def test_the_mark_best_button_records_a_decision():
    with EventLog(":memory:") as log:
        view = CompareView(["react", "cot"], 1, "q")
        view.send = lambda msg: None  # type: ignore[method-assign]
        result = run_comparison("q", ["react", "cot"], lambda s, r: ScriptedProvider(["Final Answer: 1"]), list,
                                AgentOptions(), event_log=log, on_run_end=view.run_finished)
        view.bind(result.comparison_id, log)
        view._on_front_end_msg(view, {"kind": "mark_best", "strategy": "react", "run": 1}, [])
        (best,) = SQLiteDecisionStore(log).records(kind="compare_best")
        assert best.strategy == "react" and best.stop_reason == "marked best by user"
        assert best.detail["strategies"] == ["react", "cot"]
        record_decision(log, "unknown", "cot")  # a comparison the log does not hold: still recorded
        assert SQLiteDecisionStore(log).records(kind="compare_best")[-1].detail["strategies"] == []
        view.close()


def test_the_kernel_learns_which_tools_helped_for_max_tools_selection(shell):
    question = "how did churn move this quarter?"
    bot = ScriptedProvider(["ok", {"text": "", "tool_calls": [{"name": "list_files", "arguments": {}}]},
                            "Churn fell.", "ok"])
    shell.user_ns["bot"] = bot
    shell.run_line_magic("config", "AgentMagics.max_tools = 3")
    shell.run_cell_magic("agent", "--provider bot --session before", question)  # no word matches: list order
    assert "list_files" not in {t["name"] for t in bot.calls[-1]["tools"]}
    shell.run_line_magic("config", "AgentMagics.max_tools = 0")  # every tool offered: the model picks it
    shell.run_cell_magic("agent", "--provider bot --session learn", "how did churn move last quarter?")
    assert [c.status for c in shell.user_ns["_agent"].tool_calls] == ["ok"]
    shell.run_line_magic("config", "AgentMagics.max_tools = 3")
    shell.run_cell_magic("agent", "--provider bot --session after", question)  # a fresh history
    offered = {t["name"] for t in bot.calls[-1]["tools"]}
    assert "list_files" in offered and len(offered) == 3 + 1 and "find_tools" in offered  # + the loader
