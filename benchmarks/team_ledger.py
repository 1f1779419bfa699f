"""The team ledger (issue #38) under load, on a real PostgreSQL (started here, as
tests/governance do) and on SQLite.

1. Overshoot: 16 processes spend at once against a $1 team cap. Each "call" reserves its
   estimate (the budget caps' most: counted input + max_tokens output at Claude Sonnet's
   price, $0.0643 for the request used here) in the ledger, takes a few milliseconds, and
   settles with a real cost between 30 % and 100 % of the estimate. Goal: overshoot at
   most one call's estimate. Beside it, the same load with a check that does not reserve
   (read what was spent, call if under the cap, record afterwards): the baseline.
2. Latency: one kernel's ``reserve`` (the check before a call) and ``settle``, p50 and
   p99 over 2,000 calls each, on PostgreSQL and SQLite; beside them a bare ``SELECT 1``
   round trip on the same database. Goal: check p50 <= 2 ms.

    PYTHONPATH=$PWD python benchmarks/team_ledger.py [--processes 16] [--calls 2000]

As root, PostgreSQL runs as the ``postgres`` user. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from governance.postgres import PostgresServer

from jupyter_brain.agent.cost_caps import estimate_call
from jupyter_brain.foundation.tokens import TokenCounter
from jupyter_brain.governance import CapReached, DailyCaps, Ledger, Scope

CAP = 1.0
MEMBERS = tuple(f"user{i}" for i in range(16))
TEAM = Scope("team", "physics", MEMBERS, DailyCaps(max_cost_per_day=CAP))


class SonnetSized:
    name, model, max_tokens = "anthropic", "claude-sonnet-4-5", 4096


def call_estimate() -> float:
    messages = [{"role": "user", "content": "Summarize the data frame df in three sentences. " * 20}]
    cost = estimate_call(messages, [], SonnetSized(), TokenCounter()).cost_usd
    assert cost is not None
    return cost


def _drop(url: str) -> None:
    if url.startswith("sqlite"):
        Path(url.removeprefix("sqlite:///")).unlink(missing_ok=True)
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS jupyter_brain_spending, jupyter_brain_ledger_meta")


def _spender(url: str, user: str, estimate: float, reserve: bool, seed: int, start: object) -> float:
    rng = random.Random(seed)
    ledger = Ledger(url)
    ledger.spending([user])  # connected and schema made before the start
    start.wait()  # type: ignore[attr-defined]
    spent = 0.0
    while True:
        real = estimate * rng.uniform(0.3, 1.0)
        if reserve:
            outcome = ledger.reserve(user, [TEAM], estimate, 0)
            if isinstance(outcome, CapReached):
                break
            time.sleep(rng.uniform(0.05, 0.2))  # the model call
            ledger.settle(outcome, real, 0)
        else:  # the baseline: look, call, record
            if sum(s.cost_usd for s in ledger.spending(list(MEMBERS)).values()) + estimate > CAP:
                break
            time.sleep(rng.uniform(0.05, 0.2))
            recorded = ledger.reserve(user, [], real, 0)
            assert isinstance(recorded, int)
            ledger.settle(recorded, real, 0)
        spent += real
    ledger.close()
    return spent


def overshoot(url: str, processes: int, estimate: float, reserve: bool) -> tuple[float, int]:
    _drop(url)
    context = multiprocessing.get_context("spawn")
    start = context.Manager().Event()
    with context.Pool(processes) as pool:
        jobs = [pool.apply_async(_spender, (url, MEMBERS[i], estimate, reserve, i, start)) for i in range(processes)]
        time.sleep(1.0)
        start.set()
        total = sum(job.get(timeout=600) for job in jobs)
    calls = int(round(total / estimate / 0.65)) if estimate else 0
    return total - CAP, calls


def latency(url: str, calls: int) -> dict[str, tuple[float, float]]:
    _drop(url)
    ledger = Ledger(url)
    scopes = [Scope("user", "user0", ("user0",), DailyCaps(max_cost_per_day=1e9)), TEAM]
    figures: dict[str, list[float]] = {"reserve (the check)": [], "settle": [], "SELECT 1 (baseline)": []}
    for i in range(calls + 100):
        t0 = time.perf_counter()
        outcome = ledger.reserve("user0", scopes, 0.0, 0)
        t1 = time.perf_counter()
        assert isinstance(outcome, int)
        ledger.settle(outcome, 0.0, 0)
        t2 = time.perf_counter()
        with ledger.backend.transaction() as run:
            run("SELECT 1", ())
        t3 = time.perf_counter()
        if i >= 100:  # warmed up
            figures["reserve (the check)"].append(t1 - t0)
            figures["settle"].append(t2 - t1)
            figures["SELECT 1 (baseline)"].append(t3 - t2)
    ledger.close()
    return {name: (statistics.median(v) * 1000, statistics.quantiles(v, n=100)[98] * 1000)
            for name, v in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    estimate = call_estimate()
    server = PostgresServer().init()
    server.start()
    try:
        sqlite_url = f"sqlite:///{tempfile.mkdtemp(prefix='jb-ledger-')}/ledger.sqlite"
        print(f"one call's estimate: ${estimate:.4f}; team cap ${CAP:.2f}; {args.processes} processes at once")
        for label, url in (("PostgreSQL", server.url), ("SQLite", sqlite_url)):
            over, _ = overshoot(url, args.processes, estimate, reserve=True)
            base, _ = overshoot(url, args.processes, estimate, reserve=False)
            print(f"{label:10s} overshoot with reservations: ${over:+.4f} ({over / estimate:+.2f} call estimates); "
                  f"baseline without: ${base:+.4f} ({base / estimate:+.2f})")
        print(f"\nlatency over {args.calls} calls (ms): p50 / p99")
        for label, url in (("PostgreSQL", server.url), ("SQLite", sqlite_url)):
            for name, (p50, p99) in latency(url, args.calls).items():
                print(f"{label:10s} {name:22s} {p50:6.3f} / {p99:6.3f}")
    finally:
        server.remove()


if __name__ == "__main__":
    main()
