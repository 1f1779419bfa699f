"""evals.ipynb: one scripted model for the eval set (notebooks/evals/pandas_tasks.yaml), the
``%%compare --check`` cell and the closing ``%%agent`` question.

It behaves like a model whose habits differ by strategy, so the eval has something to show:
under ReAct and without a strategy it runs code (``run_python``) and answers from what the
code printed; under chain-of-thought it reasons without running anything, so it never
changes the namespace and guesses the numbers: its checks fail, and say why. Two slips make
the other configs imperfect too (ReAct cuts the age groups at the wrong edges; without a
strategy it fills with the mean, not the median). ``SOLUTIONS`` are the tasks' reference
solutions (tests/evals/test_pandas_tasks.py checks each one passes its task's checks).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from jupyter_brain import ScriptedProvider
from jupyter_brain.providers.base import Message, ToolSchema

from ._base import pick
from ._sections import turn_prompt

TASK_FILE = Path(__file__).resolve().parent.parent / "evals" / "pandas_tasks.yaml"

SOLUTIONS = {
    'mean-price': 'round(sales.price.mean(), 2)',
    'units-above-5': 'int((sales.units > 5).sum())',
    'top-region': '(sales.price * sales.units).groupby(sales.region).sum().idxmax()',
    'revenue-column': "sales['revenue'] = sales.price * sales.units",
    'units-per-month': "monthly = sales.groupby('month').units.sum()",
    'price-pivot': "pivot = sales.pivot_table(index='region', columns='month', values='price', aggfunc='mean')",
    'region-summary': "summary = sales.groupby('region').price.agg(['min', 'max', 'mean'])",
    'drop-missing': 'df_clean = readings.dropna()',
    'fill-median': "readings['temp'] = readings.temp.fillna(readings.temp.median())",
    'missing-count': 'int(readings.isna().sum().sum())',
    'dedupe': 'unique_customers = customers.drop_duplicates()',
    'merge-products': "merged = orders.merge(products, on='product_id')",
    'order-total': "round(float((orders.merge(products, on='product_id').eval('quantity * unit_price')).sum()), 2)",
    'parse-dates': "events['when'] = pd.to_datetime(events.when)",
    'saturdays': 'int((pd.to_datetime(events.when).dt.day_of_week == 5).sum())',
    'snake-case': "raw.columns = ['first_name', 'age', 'email', 'city']",
    'clean-city': "raw['city'] = raw.city.str.strip().str.lower()",
    'height-weight-corr': 'round(people.height.corr(people.weight), 2)',
    'age-groups': "people['age_group'] = pd.cut(people.age, [0, 29, 59, 200], labels=['young', 'middle', 'senior']).astype(str)",
    'weight-histogram': "fig, ax = plt.subplots()\nax.hist(people.weight, bins=20)\nax.set_xlabel('weight')",
    'revenue-line': "fig, ax = plt.subplots()\n(sales.price * sales.units).groupby(sales.month).sum().plot(ax=ax)\nax.set_ylabel('revenue')",
    'units-bar': "fig, ax = plt.subplots()\nsales.groupby('region').units.sum().plot.bar(ax=ax)\nax.set_title('units per region')",
}
SLIPS = {  # (strategy, task): the code it runs instead of the solution
    ("react", "age-groups"): "people['age_group'] = pd.cut(people.age, [0, 30, 60, 200], "
                             "labels=['young', 'middle', 'senior']).astype(str)",
    ("none", "fill-median"): "readings['temp'] = readings.temp.fillna(readings.temp.mean())",
}
COT_GUESSES = {"mean-price": "20.00", "units-above-5": "60", "top-region": "north", "missing-count": "12",
               "order-total": "300.00", "saturdays": "9", "height-weight-corr": "0.70"}
COMPARE_PROMPT = "Put the rows of `readings` that have no missing value into `df_clean`"
QUESTION_PROMPT = "Which runs of `results` failed"


@functools.cache
def _tasks() -> dict[str, str]:
    """Each task's prompt → its id."""
    import yaml

    data = yaml.safe_load(TASK_FILE.read_text(encoding="utf-8"))
    return {" ".join(t["prompt"].split()): t["id"] for t in data["tasks"]}


def _strategy(messages: list[Message]) -> str:
    system = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
    if re.search(r"(?m)^# CHAIN OF THOUGHT FRAMEWORK", system):
        return "cot"
    return "react" if re.search(r"(?m)^# ReAct FRAMEWORK", system) else "none"


def _printed(messages: list[Message], start: int) -> str | None:
    """What the turn's last ``run_python`` printed (None before it ran)."""
    results = [str(m.get("content", "")) for m in messages[start:] if m.get("role") == "tool"]
    if not results:
        return None
    lines = [line.removeprefix("Out: ").strip() for line in results[-1].splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _run(code: str, why: str) -> dict[str, Any]:
    return {"text": f"Thought: {why}\nAction: run_python",
            "tool_calls": [{"name": "run_python", "arguments": {"code": code}}]}


def _task_reply(task: str, strategy: str, messages: list[Message], start: int) -> Any:
    code = SLIPS.get((strategy, task), SOLUTIONS[task])
    is_expression = "=" not in code.split("(")[0] and "\n" not in code
    if strategy == "cot":  # reasons, runs nothing
        if task in COT_GUESSES:
            return (f"Step 1: Without running code, I estimate from the description.\n"
                    f"Step 2: A typical value here is {COT_GUESSES[task]}.\nFinal Answer: {COT_GUESSES[task]}")
        return f"Step 1: This takes one line of pandas.\nFinal Answer: run this:\n```python\n{code}\n```"
    printed = _printed(messages, start)
    if printed is None:
        return _run(f"print({code})" if is_expression else code, "I will compute it on the data.")
    if is_expression:
        return f"Final Answer: {printed}"
    return f"Final Answer: done — I ran:\n```python\n{code}\n```"


def _question_reply(messages: list[Message], start: int) -> Any:
    """The closing question runs without a strategy: plain prose, no ReAct labels; the listing
    cuts each reason at a word, with an ellipsis."""
    printed = [str(m.get("content", "")) for m in messages[start:] if m.get("role") == "tool"]
    if not printed:
        # (asked without a strategy: no labels; each reason cut at a word, with an ellipsis)
        return {"text": "I will list the failed runs.", "tool_calls": [{"name": "run_python", "arguments": {
            "code": "from textwrap import shorten\n\nfor r in results[results.passed == False].itertuples():\n"
                    "    print(f'{r.task} × {r.config}: {shorten(r.reason, 70, placeholder=\" …\")}')"}}]}
    return ("Chain-of-thought fails every task: it never runs code, so no variable it was asked for "
            "exists and its numbers are guesses. ReAct cut the age groups at the wrong edges (30 and 60 went "
            "to the older group); without a strategy the missing temperatures were filled with the mean, "
            "not the median. The failed runs:\n```\n" + printed[-1].strip() + "\n```")


def _reply(messages: list[Message], tools: list[ToolSchema]) -> Any:
    start, prompt = turn_prompt(messages)
    flat = " ".join(prompt.split())
    strategy = _strategy(messages)
    if flat.startswith(QUESTION_PROMPT):
        return _question_reply(messages, start)
    if flat.startswith(COMPARE_PROMPT):
        return _task_reply("drop-missing", strategy, messages, start)
    task = _tasks().get(flat)
    if task is None:
        return f"Final Answer: (the scripted stand-in has no reply for {flat[:60]!r}; set an API key for a real model)"
    return _task_reply(task, strategy, messages, start)


def eval_model() -> Any:
    """The notebook's model: ``"auto"`` live, else the scripted stand-in above."""
    return pick(lambda: ScriptedProvider([_reply], repeat=True))
