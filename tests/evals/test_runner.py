"""The eval runner (#27): task × config × repeat, each on a fresh namespace with its setup,
judged by the task's checks; rows stream; an interrupt keeps what finished."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.events import EventLog
from jupyter_brain.evals.runner import COLUMNS, EvalHooks, EvalRunner, pareto_front, run_eval
from jupyter_brain.evals.tasks import EvalConfig, parse_task_file
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.session import AgentOptions

TASKS = parse_task_file({"tasks": [
    {"id": "sum", "setup": "numbers = [1, 2, 3]", "prompt": "What is the sum of numbers?",
     "expect": "6", "check": "numbers == [1, 2, 3]"},
    {"id": "product", "setup": "numbers = [2, 3, 7]", "prompt": "What is the product of numbers?", "expect": "42"},
]}, "tiny.yaml")
CONFIGS = [EvalConfig.model_validate("react"), EvalConfig.model_validate({"name": "cot-low", "strategy": "cot"})]
ANSWERS = {"sum": "Final Answer: 6", "product": "Final Answer: 42"}


@pytest.fixture()
def log():
    with EventLog(":memory:") as event_log:
        yield event_log


def hooks(reply, user_ns=None) -> EvalHooks:
    """``reply(task, config, repeat)``: the scripted answer of that run."""
    base = dict(user_ns or {})
    return EvalHooks(options=lambda config: AgentOptions(**config.flags),
                     provider=lambda task, config, repeat: ScriptedProvider([reply(task, config, repeat)]),
                     namespace=lambda: dict(base))


def test_a_config_that_answers_wrong_fails_its_check_with_the_reason(log):
    def reply(task, config, repeat):
        return ANSWERS[task.id] if config.name == "react" else "Final Answer: 41"

    streamed = []
    result = run_eval(TASKS, CONFIGS, hooks(reply), event_log=log, on_row=streamed.append)
    assert [(r["task"], r["config"], r["passed"]) for r in result.rows] == [
        ("sum", "react", True), ("sum", "cot-low", False), ("product", "react", True), ("product", "cot-low", False)]
    assert streamed == result.rows  # each row as it finished, in order
    assert result.rows[3]["reason"] == "expect: expected '42' (±0.5); the answer's numbers: 41"
    assert result.rows[1]["reason"].startswith("expect: expected '6'")
    assert all(r["status"] == "completed" and r["steps"] == 1 and r["input_tokens"] > 0 for r in result.rows)
    frame = result.to_dataframe()
    assert list(frame.columns) == list(COLUMNS) and len(frame) == 4
    by = {s["config"]: s for s in result.summary()}
    assert (by["react"]["passed"], by["react"]["checked"], by["cot-low"]["passed"]) == (2, 2, 0)
    assert result.failures() == [{"task": "sum", "config": "cot-low", "repeat": 1, "reason": result.rows[1]["reason"]},
                                 {"task": "product", "config": "cot-low", "repeat": 1, "reason": result.rows[3]["reason"]}]
    (record,) = log.records("eval")
    assert record["rows"] == result.rows and record["stopped"] == ""


def test_runs_5_give_five_rows_per_task_and_config_and_the_right_rate(log):
    def reply(task, config, repeat):  # right on repeats 1-3, wrong on 4 and 5
        return ANSWERS[task.id] if repeat <= 3 else "Final Answer: 0"

    one_task = TASKS.select(["sum"])
    result = run_eval(one_task, CONFIGS[:1], hooks(reply), event_log=log, runs=5)
    assert [r["repeat"] for r in result.rows] == [1, 2, 3, 4, 5]
    (entry,) = result.summary()
    assert (entry["passed"], entry["checked"], entry["rate"]) == (3, 5, 0.6)
    assert (entry["low"], entry["high"]) == pytest.approx((0.2307, 0.8824), abs=1e-4)


def test_each_run_gets_a_fresh_namespace_with_the_setup(log):
    seen = []

    def reply(task, config, repeat):
        def answer(messages, tools):
            return ANSWERS[task.id]
        return answer

    user_ns = {"numbers": "the user's own", "kept": 1}

    def namespace_of_run():
        ns = dict(user_ns)
        seen.append(ns)
        return ns

    setup = hooks(reply)
    setup.namespace = namespace_of_run
    result = run_eval(TASKS, CONFIGS[:1], setup, event_log=log)
    assert [r["passed"] for r in result.rows] == [True, True]
    assert [ns["numbers"] for ns in seen] == [[1, 2, 3], [2, 3, 7]] and all(ns["kept"] == 1 for ns in seen)
    assert user_ns == {"numbers": "the user's own", "kept": 1}


def test_a_broken_setup_fails_its_runs_without_calling_the_model(log):
    broken = parse_task_file({"tasks": [{"id": "x", "setup": "1 / 0", "prompt": "hi", "expect": "hi"}]}, "b.yaml")

    def reply(task, config, repeat):
        pytest.fail("the model must not be called when the setup failed")

    (row,) = run_eval(broken, CONFIGS[:1], hooks(reply), event_log=log).rows
    assert (row["status"], row["passed"]) == ("setup_error", False)
    assert row["reason"] == "the task's setup failed: ZeroDivisionError: division by zero"


def test_an_interrupted_eval_keeps_its_finished_rows_and_the_log_every_run(log):
    k = 3  # Ctrl-C arrives during the third run

    def reply(task, config, repeat):
        def answer(messages, tools):
            if (task.id, config.name) == ("product", "react"):
                raise KeyboardInterrupt
            return ANSWERS[task.id]
        return answer

    runner = EvalRunner(TASKS, CONFIGS, hooks(reply), event_log=log)
    rows = list(runner.run())
    assert len(rows) == k and runner.result.rows == rows
    assert [r["passed"] for r in rows[: k - 1]] == [True, True]
    assert (rows[-1]["task"], rows[-1]["status"], rows[-1]["passed"]) == ("product", "interrupted", None)
    assert runner.result.stopped == "interrupted"
    assert [s["checked"] for s in runner.result.summary()] == [1, 1]  # the interrupted run counts in no rate
    assert log.records("comparison") == []  # not a %%compare: compare-history stays as it was
    sessions = [s for s in log.sessions() if s.startswith("compare-")]
    assert len(sessions) == k and all(log.turns(s) for s in sessions)  # the log keeps every run, the interrupted too
    (record,) = log.records("eval")  # and the eval's rows
    assert record["stopped"] == "interrupted" and len(record["rows"]) == k


def test_max_cost_bounds_the_whole_eval(log):
    from tests.priced_providers import Priced

    def provider(task, config, repeat):
        return Priced([ANSWERS[task.id]])

    setup = EvalHooks(options=lambda config: AgentOptions(**config.flags), provider=provider, namespace=dict)
    result = run_eval(TASKS, CONFIGS, setup, event_log=log, max_cost=0.02)
    # Each run may spend what the runs before left: the fourth call could cost more (a call's most:
    # its input and 1,000 output tokens) than the $0.02 minus the three runs' cost.
    assert [r["status"] for r in result.rows] == ["completed", "completed", "completed", "budget"]
    assert 0 < sum(r["cost_usd"] for r in result.rows) < 0.02
    assert result.stopped == "the --max-cost cap ($0.02) stopped it"
    assert (result.rows[-1]["passed"], result.rows[-1]["reason"]) == (None, "stopped by the --max-cost cap")


def test_the_pareto_front():
    points = [("cheap-bad", 1.0, 0.2), ("mid", 2.0, 0.6), ("dear-good", 5.0, 0.9), ("dear-bad", 5.0, 0.5)]
    assert pareto_front(points) == ["cheap-bad", "mid", "dear-good"]


def test_a_ctrl_c_while_a_row_is_shown_stops_the_eval_there(log):
    def show(row):
        raise KeyboardInterrupt

    result = run_eval(TASKS, CONFIGS, hooks(lambda task, config, repeat: ANSWERS[task.id]), event_log=log,
                      on_row=show)
    assert len(result.rows) == 1 and result.stopped == "interrupted"
    (record,) = log.records("eval")
    assert record["stopped"] == "interrupted" and len(record["rows"]) == 1
