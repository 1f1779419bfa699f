"""Run one prompt under several reasoning strategies and compare what each one cost.

Each strategy (× ``runs``) gets a throw-away session id, its own harness and its own
provider instance, and runs in its own thread: a harness serialises its turns, and a
shared ``ScriptedProvider`` would hand one strategy's scripted reply to another.

Provider instances, decided once here:

* a provider *name* (``auto``, ``anthropic``...) — the factory builds one per run;
* a ``ScriptedProvider`` instance — every run gets a fresh copy (``clone_provider``), so
  each run replays the script from the start and none consumes another's replies;
* any other instance — shared by the runs (the SDK clients are thread-safe HTTP clients).

Checks (``--expect``, ``--check``, ``--judge``; ``jupyter_brain.evals``) judge each run as it
ends, on its answer and on the namespace it left behind: each run may get its own copy of
the user's namespace (``RunEnvironment``), so one run's side effects never reach another.
With checks, the summary has each strategy's success rate and its 95 % Wilson interval.

Nothing here imports IPython; the magic and the widget sit on top.
"""

from __future__ import annotations

import contextvars
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from .agent.cost_caps import BudgetCaps, SharedBudget
from .agent.decisions import compare_best_record, default_decision_store
from .agent.events import EventLog
from .agent.harness import TurnResult
from .agent.strategies.names import STRATEGY_CHOICES
from .agent.tools import ToolSpec
from .evals import Check, CheckResult, all_passed, failure_reason, run_checks, success_rate
from .evals.checks import one_line
from .providers.base import LLMProvider
from .providers.capabilities import clone_for_run
from .session import AgentOptions, Session

STRATEGIES = STRATEGY_CHOICES  # every strategy, and "none"
METRICS = ("steps", "tool_calls", "reflections", "input_tokens", "output_tokens",
           "cache_read_tokens", "cache_creation_tokens", "cost_usd", "wall_s",
           "judge_tokens", "judge_cost_usd")  # a --judge's own calls, apart from the run's

ProviderFactory = Callable[[str, int], LLMProvider]
ToolsFactory = Callable[[], list[ToolSpec]]
# on_event(strategy, run, event): called from the runs' threads.
CompareEventHandler = Callable[[str, int, Any], Any]


@dataclass
class RunEnvironment:
    """What one run works in: its tools, the namespace they run in (what ``--check`` reads
    when the run ends) and its workspace view. ``run_comparison(environment=...)`` builds
    one per run; without it every run shares ``tools_factory()`` and an empty namespace."""

    tools: list[ToolSpec]
    namespace: dict[str, Any] = field(default_factory=dict)
    workspace: Callable[[], str] | None = None


class CompareResult(BaseModel):
    """Every run's ``TurnResult`` per strategy and the table of their figures."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    comparison_id: str
    prompt: str
    strategies: list[str]
    runs: int = 1
    results: dict[str, list[TurnResult]] = Field(default_factory=dict)
    rows: list[dict[str, Any]] = Field(default_factory=list)
    checks: list[str] = Field(default_factory=list)  # what each run was checked against
    max_cost: float | None = None  # --max-cost: the whole comparison's cap
    # DSEval's "namespace intact": the user's variables a run changed (None: not checked).
    namespace_changes: list[str] | None = None
    _namespaces: dict[tuple[str, int], dict[str, Any]] = PrivateAttr(default_factory=dict)

    def summary(self) -> list[dict[str, Any]]:
        """Per strategy: mean of every metric and, with runs > 1, its spread (``<metric>_sd``);
        with checks, ``passed`` of ``checked`` runs and the success rate's Wilson interval."""
        return summarize(self.rows, self.strategies, self.runs)

    def verdicts(self, strategy: str) -> list[list[CheckResult]]:
        """Each run's check verdicts, in run order."""
        return [[CheckResult(**v) for v in r.get("verdicts") or []] for r in self.rows if r["strategy"] == strategy]

    def rates(self) -> dict[str, dict[str, Any]]:
        """Per strategy: ``{passed, checked, rate, low, high}`` (the 95 % Wilson interval)."""
        return {s["strategy"]: {k: s.get(k) for k in ("passed", "checked", "rate", "low", "high")}
                for s in self.summary() if s.get("checked") is not None}

    def namespace(self, strategy: str, run: int = 1) -> dict[str, Any]:
        """The namespace copy a run left behind (empty when runs shared no namespace)."""
        return self._namespaces.get((strategy, run), {})

    @property
    def total_cost_usd(self) -> float:
        """Every run's and every judge's cost, spent now (unpriced calls count as 0)."""
        return sum((spent_usd(r) or 0.0) + (r.get("judge_cost_usd") or 0.0) for r in self.rows)

    @property
    def stopped_by_budget(self) -> bool:
        """The ``--max-cost`` cap stopped a run (or left one unjudged)."""
        return any(r["status"] == "budget" or "would cross the comparison" in str(r.get("reason") or "")
                   for r in self.rows)

    def best(self, metric: str = "cost_usd") -> str | None:
        """The completed strategy with the lowest mean ``metric`` (ties: first listed)."""
        candidates = [s for s in self.summary() if s["completed"] and s[metric] is not None]
        return min(candidates, key=lambda s: s[metric])["strategy"] if candidates else None

    def to_dataframe(self):
        """The rows as a pandas DataFrame (pandas is optional for jupyter-brain)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("CompareResult.to_dataframe() needs pandas (pip install pandas); "
                              "CompareResult.rows has the same table as a list of dicts") from None
        checked = ["passed", "reason"] if self.checks else []
        return pd.DataFrame(self.rows, columns=["strategy", "run", "status", *checked, *METRICS, "error"])

    def __repr__(self) -> str:
        statuses = ", ".join(f"{r['strategy']}#{r['run']}={r['status']}" for r in self.rows)
        return f"CompareResult(strategies={self.strategies}, runs={self.runs}, [{statuses}])"

    __str__ = __repr__


def summarize(rows: list[dict[str, Any]], strategies: list[str], runs: int) -> list[dict[str, Any]]:
    """Per strategy: the mean of every metric and, with more than one run, its spread
    (sample standard deviation, ``<metric>_sd``); ``None`` where no run had a value.
    Rows still missing (runs not finished) are simply not counted yet."""
    out = []
    for strategy in strategies:
        mine = [r for r in rows if r["strategy"] == strategy]
        entry: dict[str, Any] = {
            "strategy": strategy,
            "runs": len(mine),
            "completed": sum(r["status"] == "completed" for r in mine),
        }
        verdicts = [r["passed"] for r in mine if r.get("passed") is not None]
        if verdicts:  # checks: success first (the Wilson interval of passed / checked)
            rate = success_rate(sum(verdicts), len(verdicts))
            entry.update(passed=rate.successes, checked=rate.n, rate=rate.rate, low=rate.low, high=rate.high)
            entry["reasons"] = [f"#{r['run']}: {r['reason']}" for r in mine if r.get("passed") is False]
        for metric in METRICS:
            values = [float(r[metric]) for r in mine if r.get(metric) is not None]
            entry[metric] = statistics.fmean(values) if values else None
            if runs > 1:
                entry[f"{metric}_sd"] = statistics.stdev(values) if len(values) > 1 else None
        out.append(entry)
    return out


def _figures(result: TurnResult) -> dict[str, Any]:
    """A run's tokens and cost as its row shows them: a replayed run's are those of the run
    that recorded it (it spent nothing now: ``spent_usd`` says so; ``replayed`` marks it),
    so a table means the same whether its runs replayed or called the model (#39)."""
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
    recorded = result.recorded_usage
    if recorded and not any(getattr(result, k) for k in keys) and not result.cost_usd:
        return {**{k: int(recorded.get(k) or 0) for k in keys}, "cost_usd": recorded.get("cost_usd"), "replayed": True}
    return {**{k: getattr(result, k) for k in keys}, "cost_usd": result.cost_usd, "replayed": False}


def spent_usd(row: dict[str, Any]) -> float | None:
    """What a run of a table spent now (rows written before #39 have only ``cost_usd``)."""
    return row["spent_usd"] if "spent_usd" in row else row.get("cost_usd")


def row_of(strategy: str, run: int, result: TurnResult, wall_s: float,
           verdicts: Sequence[CheckResult] = ()) -> dict[str, Any]:
    """One table row from a finished run (pandas-free, JSON-friendly); with checks, whether
    it ``passed``, why not (``reason``) and each check's verdict."""
    judged = [v for v in verdicts if v.opinion]
    return {
        "strategy": strategy,
        "run": run,
        "status": result.status,
        "passed": all_passed(verdicts),
        "reason": failure_reason(verdicts),
        "verdicts": [v.model_dump() for v in verdicts],
        "steps": len(result.steps),
        "tool_calls": len(result.tool_calls),
        "reflections": len(result.reflections),
        **_figures(result),
        "spent_usd": result.cost_usd,  # what the run spent now (a replayed run: nothing); budgets count this
        "wall_s": round(wall_s, 3),
        "judge_tokens": sum(v.input_tokens + v.output_tokens for v in judged) if judged else None,
        "judge_cost_usd": (None if any(v.cost_usd is None for v in judged)
                           else sum(v.cost_usd or 0.0 for v in judged)) if judged else None,
        "error": result.error,
    }


def judge_run(checks: Sequence[Check], result: TurnResult, namespace: dict[str, Any]) -> list[CheckResult]:
    """The run's verdicts: every check on its answer and namespace; a run that did not
    complete fails first, saying how it ended (its namespace may still pass a check)."""
    if not checks:
        return []
    stopped = [] if result.status == "completed" else [CheckResult(
        kind="run", label="the run completed", passed=False,
        reason=one_line(f"the run did not complete ({result.status})" + (f": {result.error}" if result.error else "")))]
    return [*stopped, *run_checks(checks, result.text, namespace)]


def _with_budget(check: Check, shared: SharedBudget | None) -> Check:
    """A judge without a budget of its own shares the comparison's."""
    if shared is not None and getattr(check, "budget", False) is None:
        return replace(check, budget=shared)  # type: ignore[type-var]
    return check


def clone_provider(provider: LLMProvider) -> LLMProvider:
    """A copy for one run where the provider keeps per-run state (a ScriptedProvider's
    cursor: each run replays the script from its start); other providers as they are."""
    return clone_for_run(provider)


def comparison_budget(options: AgentOptions) -> BudgetCaps | None:
    """``--max-cost`` bounds the whole comparison (one ``SharedBudget`` for all its runs);
    ``--max-tokens-total`` each run. None: no cap."""
    max_cost = getattr(options, "max_cost_per_turn", None)
    caps = BudgetCaps(max_tokens_total=getattr(options, "max_tokens_per_turn", None),
                      shared=SharedBudget(max_cost) if max_cost else None)
    return caps if caps.active else None


def run_comparison(
    prompt: str,
    strategies: list[str],
    provider_factory: ProviderFactory,
    tools_factory: ToolsFactory,
    options: AgentOptions,
    *,
    runs: int = 1,
    event_log: EventLog,
    on_event: CompareEventHandler | None = None,
    on_run_end: Callable[[dict[str, Any], TurnResult], Any] | None = None,
    workspace: Callable[[], str] | None = None,
    working_directory: str = ".",
    prompt_directory: str | None = None,
    web_search: Callable[[str], Any] | None = None,
    cancel: threading.Event | None = None,
    checks: Sequence[Check] = (),
    environment: Callable[[str, int], RunEnvironment] | None = None,
    record: bool = True,
    hooks: Sequence[Any] = (),
) -> CompareResult:
    """Run ``prompt`` under every strategy ``runs`` times, all runs at once.

    A run that raises (a provider that cannot be built, a bug) becomes an ``error`` row
    with its message; the other runs finish. Tools follow ``options.permission``; ``ask``
    has nobody to ask from a background thread, so it refuses like ``read-only``.
    A ``comparison`` record with the rows goes to the event log. ``cancel`` (or Ctrl-C
    while waiting) stops every run at its next check; they end as ``interrupted``.
    ``checks`` judge each run as it ends (a judge's calls share the ``--max-cost`` cap);
    ``environment(strategy, run)`` gives each run its own tools and namespace.
    ``record=False`` leaves the ``comparison`` record out (an eval set's runs: its ``eval`` record has them).
    ``hooks``: integrations every run's harness gets (the admin's policy, issue #38).
    """
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or not strategies:
        raise ValueError(f"unknown strategies {unknown}; choose from {', '.join(STRATEGIES)}")
    if runs < 1:
        raise ValueError("runs must be at least 1")
    comparison_id = uuid.uuid4().hex[:8]
    jobs = [(s, r) for s in strategies for r in range(1, runs + 1)]
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    results: dict[tuple[str, int], TurnResult] = {}
    lock = threading.Lock()
    cancel = cancel or threading.Event()
    budget = comparison_budget(options)  # --max-cost: all runs together
    shared = budget.shared if budget is not None else None
    checks = [_with_budget(c, shared) for c in checks]  # a judge's calls count against --max-cost
    namespaces: dict[tuple[str, int], dict[str, Any]] = {}

    def run_one(strategy: str, run: int) -> None:
        session_id = f"compare-{comparison_id}-{strategy}-{run}"
        started = time.perf_counter()
        env = RunEnvironment(tools=[], workspace=workspace)
        try:
            env = environment(strategy, run) if environment is not None else RunEnvironment(tools_factory(), {}, workspace)
            session = Session(session_id, event_log)
            harness = session.build_harness(
                provider_factory(strategy, run), env.tools,
                options.model_copy(update={"strategy": strategy}),
                approver=None, workspace=env.workspace, working_directory=working_directory,
                prompt_directory=prompt_directory, web_search=web_search, hooks=list(hooks),
            )
            forward = None if on_event is None else (lambda e: on_event(strategy, run, e))
            result = harness.run_turn(session_id, [], prompt, on_event=forward, cancel=cancel,
                                      persist_history=False, budget=budget)
        except Exception as exc:  # noqa: BLE001 - one failing strategy must not stop the others
            result = TurnResult(session_id=session_id, turn_id="", status="error", text="",
                                error=f"{type(exc).__name__}: {exc}")
        wall_s = time.perf_counter() - started
        verdicts = judge_run(checks, result, env.namespace)
        row = row_of(strategy, run, result, wall_s, verdicts)
        with lock:
            rows[(strategy, run)] = row
            results[(strategy, run)] = result
            namespaces[(strategy, run)] = env.namespace
        if on_run_end is not None:
            on_run_end(row, result)

    with ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="compare") as pool:
        # Each run in a copy of the caller's context (ipykernel ties output to the cell by it).
        futures = [pool.submit(contextvars.copy_context().run, run_one, s, r) for s, r in jobs]
        try:
            for future in futures:
                future.result()
        except KeyboardInterrupt:
            cancel.set()
            for future in futures:
                future.result()
    compare = CompareResult(
        comparison_id=comparison_id,
        prompt=prompt,
        strategies=list(strategies),
        runs=runs,
        results={s: [results[(s, r)] for r in range(1, runs + 1)] for s in strategies},
        rows=[rows[job] for job in jobs],
        checks=[c.label for c in checks],
        max_cost=shared.max_cost if shared is not None else None,
    )
    compare._namespaces = namespaces
    if not record:
        return compare
    event_log.add_record("comparison", {
        "comparison_id": comparison_id, "prompt": prompt, "strategies": list(strategies),
        "runs": runs, "rows": compare.rows, "checks": compare.checks,
    })
    return compare


def record_decision(event_log: EventLog, comparison_id: str, strategy: str, *, run: int = 1,
                    source: str = "user") -> dict[str, Any]:
    """The user's pick of the best answer, as a ``decision`` record, and as a
    ``compare_best`` decision in the decision store (``%agent decisions``)."""
    data = {"comparison_id": comparison_id, "strategy": strategy, "run": run, "source": source}
    event_log.add_record("decision", data)
    store = default_decision_store(event_log)
    if store is not None:
        compared = next((c for c in event_log.records("comparison") if c.get("comparison_id") == comparison_id),
                        {"comparison_id": comparison_id})
        store.record(compare_best_record(compared, strategy, run=run, source=source))
    return data


def comparison_history(event_log: EventLog) -> list[dict[str, Any]]:
    """Past comparisons, oldest first, each with its latest decision as ``winner``."""
    winners = {d["comparison_id"]: d["strategy"] for d in event_log.records("decision")}
    return [{**c, "winner": winners.get(c["comparison_id"])} for c in event_log.records("comparison")]

