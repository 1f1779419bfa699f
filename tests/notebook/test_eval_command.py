"""``%agent eval FILE`` (#27), in-process with a scripted model: a DataFrame of task × config ×
repeat, success rates, the rate-vs-cost figure, failures with reasons, interrupts kept."""

from __future__ import annotations

import threading
from pathlib import Path

import pandas as pd
import pytest
from IPython.core.error import UsageError

from jupyter_brain.evals.runner import COLUMNS
from jupyter_brain.providers.scripted import ScriptedProvider

TASKS = """
name: tiny
configs:
  - react
  - {name: cot-low, strategy: cot, think: low}
tasks:
  - id: sum
    setup: numbers = [1, 2, 3]
    prompt: What is the sum of `numbers`?
    expect: "6"
  - id: clean
    setup: |
      import pandas as pd
      raw = pd.DataFrame({"a": [1.0, None, 3.0]})
    prompt: Put `raw` without its missing rows into `df_clean`.
    check: [df_clean.isna().sum().sum() == 0, "len(df_clean) == 2"]
"""
RIGHT = {"What is the sum": "Final Answer: 6"}


def last_prompt(messages) -> str:
    user = [m for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
    return user[-1]["content"] if user else ""


def clean_then_answer(messages, tools):
    """The clean task: run the code once, then answer."""
    if any(m.get("role") == "tool" for m in messages):
        return "Final Answer: df_clean has the 2 complete rows."
    return {"text": "Action: run_python", "tool_calls": [
        {"name": "run_python", "arguments": {"code": "df_clean = raw.dropna()"}}]}


@pytest.fixture()
def task_file(shell) -> Path:
    path = Path("tiny.yaml")
    path.write_text(TASKS, encoding="utf-8")
    return path


def bot(wrong_for: str = "", interrupt_on: int = 0):
    """A scripted model: right answers, except under the strategy ``wrong_for``; raises
    KeyboardInterrupt (Ctrl-C) on its ``interrupt_on``-th run."""
    lock, runs = threading.Lock(), []

    def reply(messages, tools):
        prompt = last_prompt(messages)
        system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
        if not any(m.get("role") in ("assistant", "tool") for m in messages):
            with lock:
                runs.append(prompt)
                if len(runs) == interrupt_on:
                    raise KeyboardInterrupt
        if wrong_for and wrong_for in system.lower() and "sum" in prompt:
            return "Final Answer: 7"
        if "sum" in prompt:
            return RIGHT["What is the sum"]
        return clean_then_answer(messages, tools)

    return ScriptedProvider([reply], repeat=True), runs


def test_a_bad_task_file_is_one_line(shell, task_file):
    Path("bad.yaml").write_text("tasks:\n  - id: x\n    prompt: hi\n    check: 'x ==='\n", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        shell.run_line_magic("agent", "eval bad.yaml")
    assert str(caught.value) == ("%agent eval: bad.yaml: tasks[0] (id 'x') → check: 'x ===' is not a Python "
                                 "expression (invalid syntax)")
    with pytest.raises(UsageError, match="tiny has no config 'fast' \\(its configs: react, cot-low\\)"):
        shell.run_line_magic("agent", "eval tiny.yaml --configs fast")


def test_the_help(shell, capsys):
    shell.run_line_magic("agent", "eval --help")
    out = capsys.readouterr().out
    assert "usage: %agent eval" in out and "--strategies" in out and "--max-cost" in out and "--runs" in out


def test_eval_returns_a_dataframe_and_a_wrong_config_fails_with_its_reason(shell, task_file, capsys):
    shell.user_ns["bots"], _ = bot(wrong_for="")
    shell.user_ns["data"] = {"kept": 1}
    frame = shell.run_line_magic("agent", "eval tiny.yaml --provider bots")
    assert isinstance(frame, pd.DataFrame) and shell.user_ns["_eval"] is frame
    assert list(frame.columns) == list(COLUMNS)
    assert list(zip(frame.task, frame.config, frame.repeat, strict=True)) == [
        ("sum", "react", 1), ("sum", "cot-low", 1), ("clean", "react", 1), ("clean", "cot-low", 1)]
    assert frame.passed.tolist() == [True, True, True, True]
    assert "df_clean" not in shell.user_ns and shell.user_ns["data"] == {"kept": 1}  # runs work on copies
    out = capsys.readouterr().out
    assert "[1/4] sum × react #1: pass (completed" in out  # each run's line as it finishes
    assert "react            2/2 · 100 % (34–100 %)" in out
    assert "<figure: tiny: success rate vs cost, 2 config(s)>" in out  # the rate-vs-cost plot
    assert "no failed runs" in out


def test_a_strategy_that_answers_wrong_fails_its_check(shell, task_file, capsys):
    # The strategies' system prompts differ: the scripted model answers 7 under chain-of-thought.
    shell.user_ns["bots"], _ = bot(wrong_for="step by step")
    frame = shell.run_line_magic("agent", "eval tiny.yaml --provider bots --strategies react,cot --tasks sum")
    by = dict(zip(frame.config, frame.passed, strict=True))
    assert by == {"react": True, "cot": False}
    reason = frame.set_index("config").loc["cot", "reason"]
    assert reason == "expect: expected '6' (±0.5); the answer's numbers: 7"
    out = capsys.readouterr().out
    assert "failures by task:\nsum:\n  cot #1: expect: expected '6'" in out


def test_runs_5_give_the_rows_and_the_rate(shell, task_file, capsys):
    lock, seen = threading.Lock(), []

    def three_of_five(messages, tools):
        with lock:
            seen.append(1)
            return "Final Answer: 6" if len(seen) <= 3 else "Final Answer: 5"

    shell.user_ns["bot"] = ScriptedProvider([three_of_five])
    frame = shell.run_line_magic("agent", "eval tiny.yaml --provider bot --configs react --tasks sum --runs 5")
    assert frame.repeat.tolist() == [1, 2, 3, 4, 5] and frame.passed.sum() == 3
    (entry,) = frame.attrs["summary"]
    assert (entry["passed"], entry["checked"]) == (3, 5)
    assert entry["low"] == pytest.approx(0.2307, abs=1e-4) and entry["high"] == pytest.approx(0.8824, abs=1e-4)
    assert "3/5 · 60 % (23–88 %)" in capsys.readouterr().out


def test_an_interrupted_eval_keeps_its_finished_rows_and_the_log_every_run(shell, task_file, capsys):
    k = 3
    shell.user_ns["bots"], runs = bot(interrupt_on=k)
    frame = shell.run_line_magic("agent", "eval tiny.yaml --provider bots")
    assert len(frame) == k and len(runs) == k  # nothing started after the interrupted run
    assert frame.passed.tolist()[: k - 1] == [True, True]
    assert (frame.status.iloc[-1], frame.passed.iloc[-1]) == ("interrupted", None)
    assert frame.attrs["stopped"] == "interrupted"
    out = capsys.readouterr().out
    assert "eval stopped early (interrupted): 3 of 4 runs are in the DataFrame, the last one marked" in out
    log = shell.magics_manager.registry["AgentMagics"].manager.event_log
    assert len([s for s in log.sessions() if s.startswith("compare-")]) == k  # every run, the interrupted one too
    (record,) = log.records("eval")
    assert record["stopped"] == "interrupted" and [r["status"] for r in record["rows"]][-1] == "interrupted"



def test_a_tasks_judge_is_a_labelled_model_opinion(shell, task_file):
    Path("judged.yaml").write_text("tasks:\n  - id: poem\n    prompt: Write a haiku.\n    judge: It is a haiku.\n",
                                   encoding="utf-8")
    shell.user_ns["bot"] = ScriptedProvider(["Final Answer: roses are red"], repeat=True)
    shell.user_ns["judge"] = ScriptedProvider(["FAIL\nIt has no 5-7-5 lines."], repeat=True)
    frame = shell.run_line_magic("agent", "eval judged.yaml --provider bot --judge-provider judge --strategies react")
    assert frame.passed.tolist() == [False]
    assert frame.reason.tolist() == ["judge (model opinion): It has no 5-7-5 lines."]


def test_a_dseval_problem_set_runs_through_the_command(shell):
    fixture = Path(__file__).resolve().parents[1] / "evals" / "fixtures" / "dseval_orders.py"

    def reply(messages, tools):
        prompt = last_prompt(messages)
        if "total amount" in prompt:
            return "Final Answer: 65.0"
        if any(m.get("role") == "tool" for m in messages):
            return "Final Answer: added."
        return {"text": "Action: run_python", "tool_calls": [
            {"name": "run_python", "arguments": {"code": "orders['double'] = orders['amount'] * 2"}}]}

    shell.user_ns["bot"] = ScriptedProvider([reply], repeat=True)
    frame = shell.run_line_magic("agent", f"eval {fixture} --provider bot --strategies none")
    assert frame.task.tolist() == ["dseval_orders-1", "dseval_orders-2"]
    assert frame.passed.tolist() == [True, True], frame.reason.tolist()


def test_max_cost_bounds_the_whole_eval(shell, task_file, capsys):
    from tests.priced_providers import Priced

    class PricedShared(Priced):
        def clone(self):  # one priced model for every run (a ScriptedProvider's copy is unpriced)
            return self

    shell.user_ns["bot"] = PricedShared(["Final Answer: 6"], repeat=True)
    frame = shell.run_line_magic("agent", "eval tiny.yaml --provider bot --tasks sum --runs 4 --configs react "
                                          "--max-cost 0.02")
    assert frame.status.tolist()[-1] == "budget" and len(frame) < 4
    assert frame.cost_usd.sum() < 0.02
    assert frame.attrs["stopped"] == "the --max-cost cap ($0.02) stopped it"
    assert "eval stopped early (the --max-cost cap ($0.02) stopped it)" in capsys.readouterr().out


def test_a_provider_that_cannot_be_built_is_an_error_row_or_fails_before_any_run(shell, task_file):
    frame = shell.run_line_magic("agent", "eval tiny.yaml --provider nosuch --configs react --tasks sum")
    assert frame.status.tolist() == ["error"] and "nosuch" in frame.error.iloc[0]
    with pytest.raises(UsageError, match="nosuch"):
        shell.run_line_magic("agent", "eval tiny.yaml --provider nosuch --configs react --tasks sum --rerun")
