"""Task files (#27): YAML, JSONL and DSEval's format are read; a bad file is one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_brain.evals.dseval import ReferenceCheck
from jupyter_brain.evals.task_files import load_task_file
from jupyter_brain.evals.tasks import TaskFileError

FIXTURES = Path(__file__).parent / "fixtures"

YAML = """
name: tiny
configs:
  - react
  - {name: cot-high, strategy: cot, think: high}
tasks:
  - id: total
    setup: |
      import pandas as pd
      df = pd.DataFrame({"a": [1, 2, 3]})
    prompt: What is the sum of column a?
    expect: "6"
    check: answer.strip() != ""
  - id: clean
    prompt: Drop the missing rows into df_clean.
    check: [df_clean.isna().sum().sum() == 0, "len(df_clean) == 2"]
    judge: The answer says how many rows were dropped.
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_yaml_file_is_read_with_its_configs(tmp_path):
    tasks = load_task_file(write(tmp_path, "t.yaml", YAML))
    assert tasks.name == "tiny"
    assert [t.id for t in tasks.tasks] == ["total", "clean"]
    total, clean = tasks.tasks
    assert total.expect == ["6"] and total.check == ['answer.strip() != ""'] and "pd.DataFrame" in total.setup
    assert clean.check == ["df_clean.isna().sum().sum() == 0", "len(df_clean) == 2"]
    assert clean.judge == "The answer says how many rows were dropped."
    assert [(c.name, c.flags) for c in tasks.configs] == [
        ("react", {"strategy": "react"}), ("cot-high", {"strategy": "cot", "think": "high"})]


def test_a_jsonl_file_is_read_one_task_a_line(tmp_path):
    lines = [{"configs": ["none", {"name": "cot", "strategy": "cot"}]},
             {"id": 1, "prompt": "What is 6*7?", "expect": "42"},
             {"id": "two", "prompt": "Set x to 3.", "check": "x == 3"}]
    tasks = load_task_file(write(tmp_path, "t.jsonl", "\n".join(map(json.dumps, lines)) + "\n\n"))
    assert [t.id for t in tasks.tasks] == ["1", "two"]
    assert [c.name for c in tasks.configs] == ["none", "cot"]


def test_dsevals_problem_format_is_read():
    tasks = load_task_file(FIXTURES / "dseval_orders.py")
    first, second = tasks.tasks
    assert (first.id, first.prompt) == ("dseval_orders-1", "What is the total amount of all orders?")
    assert "orders = pd.DataFrame" in first.setup and first.reference == 'orders["amount"].sum()'
    assert second.reference_names == ["orders"] and 'orders["amount"].sum()' in second.setup  # DSEval: one session
    check = ReferenceCheck(first.setup, first.reference)
    assert check.evaluate("The total is 65.", {}).passed
    assert check.evaluate("The total is 64.", {}).reason == "the reference's result np.float64(65.0) is not in the answer"
    namespace: dict = {}
    exec(second.setup, namespace)
    changed = ReferenceCheck(second.setup, second.reference, ("orders",))
    assert changed.evaluate("", namespace).reason == "orders differs from the reference's"
    exec(second.reference, namespace)
    assert changed.evaluate("done", namespace).passed


@pytest.mark.parametrize(("name", "text", "message"), [
    ("a.yaml", "tasks:\n  - id: x\n    prompt: hi\n    check: 'df ==='\n",
     "a.yaml: tasks[0] (id 'x') → check: 'df ===' is not a Python expression (invalid syntax)"),
    ("b.yaml", "tasks:\n  - id: x\n    prompt: hi\n  - id: y\n    promt: hi\n",
     "b.yaml: tasks[1] (id 'y') → prompt: Field required (and 1 more)"),
    ("c.yaml", "tasks:\n  - id: x\n    prompt: hi\n    setup: 'x = = 1'\n",
     "c.yaml: tasks[0] (id 'x') → setup: not valid Python (line 1: invalid syntax)"),
    ("d.yaml", "configs: [{name: fast, think: hgh}]\ntasks: [{id: x, prompt: hi}]\n",
     "d.yaml: configs[0] (name 'fast'): think: Input should be 'off', 'low', 'medium' or 'high'"),
    ("e.yaml", "configs: [{name: fast, strateg: cot}]\ntasks: [{id: x, prompt: hi}]\n",
     "e.yaml: configs[0] (name 'fast'): unknown setting strateg"),
    ("f.yaml", "tasks: [{id: x, prompt: hi}, {id: x, prompt: ho}]\n", "f.yaml: task id 'x' appears more than once"),
    ("g.yaml", "tasks: [{id: x, prompt: hi}\n", "g.yaml: not valid YAML: line 2, column 1:"),
    ("h.jsonl", '{"id": "x", "prompt": "hi"}\n{"id": \n', "h.jsonl: line 2 is not JSON (Expecting value)"),
    ("i.yaml", "tasks: []\n", "i.yaml: tasks: List should have at least 1 item after validation, not 0"),
    ("j.txt", "x", "j.txt: unknown task file type '.txt' (use .yaml, .jsonl, or DSEval's .py)"),
])
def test_a_bad_file_is_one_line_naming_the_entry_and_field(tmp_path, name, text, message):
    with pytest.raises(TaskFileError) as caught:
        load_task_file(write(tmp_path, name, text))
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(TaskFileError, match=r"nope.yaml: cannot read it \(No such file or directory\)"):
        load_task_file(tmp_path / "nope.yaml")
