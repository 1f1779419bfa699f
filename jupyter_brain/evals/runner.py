"""Run an eval set: every task × config × repeat, one agent turn each, judged by its checks.

Each run gets a fresh copy of the user's namespace with the task's ``setup`` executed in
it, then one turn through ``jupyter_brain.compare.run_comparison`` (one strategy, one run):
the same path a ``%%compare`` run takes, so the turn goes to the event log, the budget
caps and the recordings (replay) apply, and the checks read the namespace the run left.
Runs go one after another: rows stream out in order (``on_row``), a progress view can
count them, and an interrupt has one meaning: the rows finished so far are kept, the run
it stopped is marked ``interrupted`` (not counted in any rate), and nothing more starts.
``--max-cost`` bounds the whole eval: each run's cap is what is left of it.

Nothing here imports IPython; ``notebook/eval_cell.py`` supplies the providers, tools
and options, ``notebook/eval_view.py`` shows the rows.
"""

from __future__ import annotations

import contextlib
import io
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agent.tools import ToolSpec
from ..providers.base import LLMProvider
from ..settings_model import AgentOptions
from .checks import Check, ExpectCheck, ExprCheck, one_line
from .dseval import ReferenceCheck
from .rates import success_rate
from .tasks import EvalConfig, EvalTask, TaskFile

COLUMNS = ("task", "config", "repeat", "status", "passed", "reason", "input_tokens", "output_tokens",
           "cost_usd", "seconds", "steps", "error")
STOPPING = ("interrupted", "budget")  # a run that ends so stops the eval


@dataclass
class EvalHooks:
    """What the caller (the notebook layer, a script, a test) supplies for each run."""

    options: Callable[[EvalConfig], AgentOptions]  # the config's settings over the defaults
    provider: Callable[[EvalTask, EvalConfig, int], LLMProvider]  # (task, config, repeat)
    namespace: Callable[[], dict[str, Any]]  # a fresh copy of the user's namespace
    tools: Callable[[dict[str, Any]], list[ToolSpec]] = lambda namespace: []  # tools bound to it
    workspace: Callable[[dict[str, Any]], Callable[[], str] | None] = lambda namespace: None
    judge: Callable[[EvalTask, AgentOptions], Check] | None = None  # a task's ``judge`` rubric
    working_directory: str = "."
    turn_hooks: Sequence[Any] = ()  # integrations of every run (the admin's policy, issue #38)


@dataclass
class EvalResult:
    """The rows (one per task × config × repeat that ran) and how the eval ended."""

    eval_id: str
    name: str
    tasks: list[str]
    configs: list[str]
    runs: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""  # why the eval stopped early ("" when every run ran)
    max_cost: float | None = None

    @property
    def planned(self) -> int:
        return len(self.tasks) * len(self.configs) * self.runs

    def summary(self) -> list[dict[str, Any]]:
        """Per config: success rate (95 % Wilson interval) and mean tokens, cost, seconds."""
        return summarize(self.rows, self.configs)

    def failures(self) -> list[dict[str, Any]]:
        """The failed runs: task, config, repeat and why."""
        return [{k: r[k] for k in ("task", "config", "repeat", "reason")} for r in self.rows if r["passed"] is False]

    def to_dataframe(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.rows, columns=list(COLUMNS))


def _mean(values: Sequence[float | None]) -> float | None:
    known = [float(v) for v in values if v is not None]
    return sum(known) / len(known) if known else None


def summarize(rows: Sequence[dict[str, Any]], configs: Sequence[str]) -> list[dict[str, Any]]:
    """Per config: ``passed`` of ``checked`` runs, ``rate``, ``low``–``high`` (Wilson), means."""
    out = []
    for config in configs:
        mine = [r for r in rows if r["config"] == config]
        judged = [bool(r["passed"]) for r in mine if r["passed"] is not None]
        rate = success_rate(sum(judged), len(judged))
        out.append({
            "config": config, "runs": len(mine), "passed": rate.successes, "checked": rate.n,
            "rate": rate.rate, "low": rate.low, "high": rate.high,
            **{metric: _mean([r[metric] for r in mine]) for metric in ("input_tokens", "output_tokens",
                                                                        "cost_usd", "seconds", "steps")},
        })
    return out


def pareto_front(points: Sequence[tuple[str, float, float]]) -> list[str]:
    """The names of the points ``(name, cost, rate)`` that no other beats: as cheap or
    cheaper and as good or better, one of them strictly."""
    front = []
    for name, cost, rate in points:
        beaten = any(c <= cost and r >= rate and (c < cost or r > rate) for n, c, r in points if n != name)
        if not beaten:
            front.append(name)
    return front


def task_checks(task: EvalTask, options: AgentOptions, hooks: EvalHooks) -> list[Check]:
    """The task's checks, in the file's order: expect, check, reference (DSEval), judge."""
    checks: list[Check] = [ExpectCheck(text) for text in task.expect]
    checks += [ExprCheck(expression) for expression in task.check]
    if task.reference:
        checks.append(ReferenceCheck(task.setup, task.reference, tuple(task.reference_names)))
    if task.judge is not None and hooks.judge is not None:
        checks.append(hooks.judge(task, options))
    return checks


def setup_namespace(task: EvalTask, base: dict[str, Any]) -> str:
    """Run the task's setup in ``base`` (its prints swallowed); the error, on one line, or ""."""
    if not task.setup.strip():
        return ""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(task.setup, f"<setup of {task.id}>", "exec"), base)  # the task file's code
    except Exception as exc:  # noqa: BLE001 - a broken setup fails its runs, not the eval
        return one_line(f"{type(exc).__name__}: {exc}")
    return ""


def _row(task: EvalTask, config: EvalConfig, repeat: int, **values: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(task=task.id, config=config.name, repeat=repeat, reason="")
    row.update(values)
    return row


class EvalRunner:
    """Runs a ``TaskFile`` under ``configs``; ``run()`` yields each row as it finishes."""

    def __init__(self, tasks: TaskFile, configs: Sequence[EvalConfig], hooks: EvalHooks, *, event_log: Any,
                 runs: int = 1, max_cost: float | None = None) -> None:
        if runs < 1:
            raise ValueError("runs must be at least 1")
        if not configs:
            raise ValueError("no configs to run the tasks under")
        self.tasks, self.configs, self.hooks = tasks, list(configs), hooks
        self.event_log, self.max_cost = event_log, max_cost
        self.result = EvalResult(uuid.uuid4().hex[:8], tasks.name, [t.id for t in tasks.tasks],
                                 [c.name for c in configs], runs, max_cost=max_cost)
        self.spent = 0.0

    def jobs(self) -> Iterator[tuple[EvalTask, EvalConfig, int]]:
        for task in self.tasks.tasks:
            for config in self.configs:
                for repeat in range(1, self.result.runs + 1):
                    yield task, config, repeat

    def run(self) -> Iterator[dict[str, Any]]:
        """Each finished run's row, in order. Stops after a run that was interrupted or
        stopped by the budget (that row is yielded, marked), and on Ctrl-C between runs;
        the ``eval`` record with every row goes to the event log either way."""
        try:
            for task, config, repeat in self.jobs():
                if self.max_cost is not None and self.spent >= self.max_cost:
                    self.result.stopped = f"the --max-cost cap (${self.max_cost:g}) is spent"
                    break
                try:
                    row = self.run_one(task, config, repeat)
                except KeyboardInterrupt:
                    row = _row(task, config, repeat, status="interrupted", reason="interrupted")
                if row["status"] in STOPPING:  # a run stopped from outside is no verdict: it counts in no rate
                    row.update(passed=None, reason="interrupted" if row["status"] == "interrupted"
                               else "stopped by the --max-cost cap")
                self.result.rows.append(row)
                self.spent += (row.get("spent_usd", row["cost_usd"]) or 0.0)  # a replayed run spent nothing
                yield row
                if row["status"] in STOPPING:
                    self.result.stopped = ("interrupted" if row["status"] == "interrupted"
                                           else f"the --max-cost cap (${self.max_cost or 0:g}) stopped it")
                    break
        except KeyboardInterrupt:  # while the caller handled a row
            self.result.stopped = "interrupted"
        finally:
            self._record()

    def run_all(self, on_row: Callable[[dict[str, Any]], Any] | None = None) -> EvalResult:
        """Every row through ``on_row``; a Ctrl-C while it shows one stops the eval there too."""
        rows = self.run()
        try:
            for row in rows:
                if on_row is not None:
                    on_row(row)
        except KeyboardInterrupt:
            self.result.stopped = "interrupted"
            rows.close()  # the eval record is written with what finished
        return self.result

    def run_one(self, task: EvalTask, config: EvalConfig, repeat: int) -> dict[str, Any]:
        """One turn on a fresh namespace with the task's setup; its row."""
        from ..compare import RunEnvironment, run_comparison

        started = time.perf_counter()
        options = self.hooks.options(config)
        if self.max_cost is not None:  # the whole eval's cap: this run may spend what is left
            options = options.model_copy(update={"max_cost_per_turn": max(self.max_cost - self.spent, 1e-9)})
        namespace = self.hooks.namespace()
        broken = setup_namespace(task, namespace)
        if broken:
            return _row(task, config, repeat, status="setup_error", passed=False, error=broken,
                        reason=f"the task's setup failed: {broken}", seconds=round(time.perf_counter() - started, 3))
        environment = RunEnvironment(self.hooks.tools(namespace), namespace, self.hooks.workspace(namespace))
        compared = run_comparison(  # a provider that cannot be built is the run's error row
            task.prompt, [options.strategy], lambda strategy, run: self.hooks.provider(task, config, repeat), list,
            options,
            runs=1, event_log=self.event_log, working_directory=self.hooks.working_directory,
            checks=task_checks(task, options, self.hooks), environment=lambda strategy, run: environment,
            record=False,  # not a %%compare: %agent compare-history stays as it was; the eval record has the rows
            hooks=self.hooks.turn_hooks,
        )
        (done,) = compared.rows
        reason = "; ".join(dict.fromkeys(done["reason"].split("; ")))  # a missing variable fails every check alike
        return _row(task, config, repeat, status=done["status"], passed=done["passed"], reason=reason,
                    input_tokens=done["input_tokens"], output_tokens=done["output_tokens"],
                    cost_usd=_plus(done["cost_usd"], done["judge_cost_usd"]), steps=done["steps"],
                    spent_usd=_plus(done.get("spent_usd", done["cost_usd"]), done["judge_cost_usd"]),
                    seconds=round(time.perf_counter() - started, 3), error=done["error"])

    def _record(self) -> None:
        result = self.result
        self.event_log.add_record("eval", {
            "eval_id": result.eval_id, "name": result.name, "tasks": result.tasks, "configs": result.configs,
            "runs": result.runs, "rows": result.rows, "stopped": result.stopped, "max_cost": result.max_cost,
        })


def _plus(a: float | None, b: float | None) -> float | None:
    return a if b is None else (a or 0.0) + b


def run_eval(tasks: TaskFile, configs: Sequence[EvalConfig], hooks: EvalHooks, *, event_log: Any, runs: int = 1,
             max_cost: float | None = None, on_row: Callable[[dict[str, Any]], Any] | None = None) -> EvalResult:
    """Every task × config × repeat (see the module docstring); ``on_row`` sees each row."""
    return EvalRunner(tasks, configs, hooks, event_log=event_log, runs=runs, max_cost=max_cost).run_all(on_row)
