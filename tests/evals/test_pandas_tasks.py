"""notebooks/evals/pandas_tasks.yaml, the project's own eval set (#27): every task's checks
fail on its bare setup and pass with its reference solution (notebooks/demo_models/evals.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib
import pytest

from jupyter_brain.evals import all_passed, run_checks
from jupyter_brain.evals.runner import EvalHooks, setup_namespace, task_checks
from jupyter_brain.evals.task_files import load_task_file
from jupyter_brain.session import AgentOptions

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
sys.path.insert(0, str(NOTEBOOKS))
from demo_models.evals import SOLUTIONS  # noqa: E402

matplotlib.use("Agg")
TASKS = load_task_file(NOTEBOOKS / "evals" / "pandas_tasks.yaml")
HOOKS = EvalHooks(options=lambda c: AgentOptions(), provider=lambda *a: None, namespace=dict)


def test_the_set_has_about_twenty_tasks_each_with_a_check():
    assert 20 <= len(TASKS.tasks) <= 25 and all(t.has_checks for t in TASKS.tasks)
    assert [c.name for c in TASKS.configs] == ["react", "cot", "none"]
    assert set(SOLUTIONS) == {t.id for t in TASKS.tasks}
    assert sum("plt" in t.setup for t in TASKS.tasks) >= 3  # plotting tasks too


@pytest.mark.parametrize("task", TASKS.tasks, ids=lambda t: t.id)
def test_the_checks_fail_on_the_setup_and_pass_with_the_solution(task):
    checks = task_checks(task, AgentOptions(), HOOKS)
    namespace: dict = {}
    assert setup_namespace(task, namespace) == ""
    assert all_passed(run_checks(checks, "", dict(namespace))) is False  # nothing done: fails
    solution = SOLUTIONS[task.id]
    answer = "done"
    try:
        answer = str(eval(compile(solution, "<solution>", "eval"), namespace))
    except SyntaxError:
        exec(compile(solution, "<solution>", "exec"), namespace)
    verdicts = run_checks(checks, f"Final Answer: {answer}", namespace)
    assert all_passed(verdicts), [v.reason for v in verdicts if not v.passed]
