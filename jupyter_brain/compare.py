"""Run one prompt under several reasoning strategies and compare what each one cost.

Each strategy (× ``runs``) gets a throw-away session id, its own harness and its own
provider instance, and runs in its own thread: a harness serialises its turns, and a
shared ``ScriptedProvider`` would hand one strategy's scripted reply to another.

Provider instances, decided once here:

* a provider *name* (``auto``, ``anthropic``...) — the factory builds one per run;
* a ``ScriptedProvider`` instance — every run gets a fresh copy (``clone_provider``), so
  each run replays the script from the start and none consumes another's replies;
* any other instance — shared by the runs (the SDK clients are thread-safe HTTP clients).

Nothing here imports IPython; the magic and the widget sit on top.
"""

from __future__ import annotations

import contextvars
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .agent.cost_caps import BudgetCaps, SharedBudget
from .agent.decisions import compare_best_record, default_decision_store
from .agent.events import EventLog
from .agent.harness import TurnResult
from .agent.strategies.names import STRATEGY_CHOICES
from .agent.tools import ToolSpec
from .providers.base import LLMProvider
from .providers.capabilities import clone_for_run
from .session import AgentOptions, Session

STRATEGIES = STRATEGY_CHOICES  # every strategy, and "none"
METRICS = ("steps", "tool_calls", "reflections", "input_tokens", "output_tokens",
           "cache_read_tokens", "cache_creation_tokens", "cost_usd", "wall_s")

ProviderFactory = Callable[[str, int], LLMProvider]
ToolsFactory = Callable[[], list[ToolSpec]]
# on_event(strategy, run, event): called from the runs' threads.
CompareEventHandler = Callable[[str, int, Any], Any]


class CompareResult(BaseModel):
    """Every run's ``TurnResult`` per strategy and the table of their figures."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    comparison_id: str
    prompt: str
    strategies: list[str]
    runs: int = 1
    results: dict[str, list[TurnResult]] = Field(default_factory=dict)
    rows: list[dict[str, Any]] = Field(default_factory=list)

    def summary(self) -> list[dict[str, Any]]:
        """Per strategy: mean of every metric and, with runs > 1, its spread (``<metric>_sd``)."""
        return summarize(self.rows, self.strategies, self.runs)

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
        return pd.DataFrame(self.rows, columns=["strategy", "run", "status", *METRICS, "error"])

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
        for metric in METRICS:
            values = [float(r[metric]) for r in mine if r[metric] is not None]
            entry[metric] = statistics.fmean(values) if values else None
            if runs > 1:
                entry[f"{metric}_sd"] = statistics.stdev(values) if len(values) > 1 else None
        out.append(entry)
    return out


def row_of(strategy: str, run: int, result: TurnResult, wall_s: float) -> dict[str, Any]:
    """One table row from a finished run (pandas-free, JSON-friendly)."""
    return {
        "strategy": strategy,
        "run": run,
        "status": result.status,
        "steps": len(result.steps),
        "tool_calls": len(result.tool_calls),
        "reflections": len(result.reflections),
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "cache_read_tokens": result.cache_read_tokens,
        "cache_creation_tokens": result.cache_creation_tokens,
        "cost_usd": result.cost_usd,
        "wall_s": round(wall_s, 3),
        "error": result.error,
    }


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
) -> CompareResult:
    """Run ``prompt`` under every strategy ``runs`` times, all runs at once.

    A run that raises (a provider that cannot be built, a bug) becomes an ``error`` row
    with its message; the other runs finish. Tools follow ``options.permission``; ``ask``
    has nobody to ask from a background thread, so it refuses like ``read-only``.
    A ``comparison`` record with the rows goes to the event log. ``cancel`` (or Ctrl-C
    while waiting) stops every run at its next check; they end as ``interrupted``.
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

    def run_one(strategy: str, run: int) -> None:
        session_id = f"compare-{comparison_id}-{strategy}-{run}"
        started = time.perf_counter()
        try:
            session = Session(session_id, event_log)
            harness = session.build_harness(
                provider_factory(strategy, run), tools_factory(),
                options.model_copy(update={"strategy": strategy}),
                approver=None, workspace=workspace, working_directory=working_directory,
                prompt_directory=prompt_directory, web_search=web_search,
            )
            forward = None if on_event is None else (lambda e: on_event(strategy, run, e))
            result = harness.run_turn(session_id, [], prompt, on_event=forward, cancel=cancel,
                                      persist_history=False, budget=budget)
        except Exception as exc:  # noqa: BLE001 - one failing strategy must not stop the others
            result = TurnResult(session_id=session_id, turn_id="", status="error", text="",
                                error=f"{type(exc).__name__}: {exc}")
        row = row_of(strategy, run, result, time.perf_counter() - started)
        with lock:
            rows[(strategy, run)] = row
            results[(strategy, run)] = result
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
    )
    event_log.add_record("comparison", {
        "comparison_id": comparison_id, "prompt": prompt, "strategies": list(strategies),
        "runs": runs, "rows": compare.rows,
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

