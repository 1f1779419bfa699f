"""Fault-proof sessions: N randomised fault scenarios through the real harness and SDKs.

Each run is a 2–4 turn session (a few tool-calling steps per turn) against the local
mock Anthropic / OpenAI-compatible servers, streaming on or off, with HTTP 429/500/529,
connection resets, mid-stream error events, dropped and truncated streams, malformed
tool JSON, failing and hanging tools, cancellation and Ctrl-C at random points; then a
turn against a healthy server and a reopen of the event log. After every turn the
checks of ``tests/fault_scenarios.py`` run (valid history, signatures intact, request
bodies the API would accept, event log, AgentView and TextView agree). Run ``i`` uses
seed ``--seed + i``, so a failure is replayed with ``--seed S --runs 1``. Prints figures;
exits 1 when a run failed.

    python benchmarks/faults.py [--runs 1000] [--seed 0] [--show 10]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fault_scenarios import FAULT_KINDS, FaultRig, random_scenario, run_scenario


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=10, help="failures to print in full")
    args = parser.parse_args()

    planned: Counter = Counter()
    reached: Counter = Counter()
    statuses: Counter = Counter()
    providers: Counter = Counter()
    failures = []
    turns = 0
    durations = []
    started = time.perf_counter()
    with FaultRig() as rig, tempfile.TemporaryDirectory(prefix="jb-faults-") as tmp:
        for i in range(args.runs):
            seed = args.seed + i
            scenario = random_scenario(seed)
            report = run_scenario(rig, scenario, Path(tmp) / f"run-{seed}")
            planned += report.planned
            reached += report.reached
            statuses += report.statuses
            providers[f"{scenario.provider} {'stream' if scenario.stream else 'no-stream'}"] += 1
            turns += report.turns
            durations.append(report.duration_s)
            if not report.ok:
                failures.append((seed, scenario, report))
    wall = time.perf_counter() - started

    runs = args.runs
    print("fault scenarios: real AgentHarness + SDK providers against the mock servers")
    print(f"{'runs':<24}{runs:>8}   (seeds {args.seed}..{args.seed + runs - 1})")
    print(f"{'passed':<24}{runs - len(failures):>8}")
    print(f"{'failed':<24}{len(failures):>8}")
    print(f"{'turns checked':<24}{turns:>8}   " + ", ".join(f"{k} {v}" for k, v in statuses.most_common()))
    print(f"{'providers':<24}{'':>8}   " + ", ".join(f"{k} {v}" for k, v in sorted(providers.items())))
    durations.sort()
    print(f"{'wall time':<24}{wall:>8.1f} s   (median {durations[len(durations) // 2] * 1000:.0f} ms per run,"
          f" max {durations[-1] * 1000:.0f} ms)")
    print()
    print(f"{'fault kind':<16}{'injected':>10}{'exercised':>11}")
    for kind in FAULT_KINDS:
        print(f"{kind:<16}{planned[kind]:>10}{reached[kind]:>11}")
    print(f"{'total':<16}{sum(planned.values()):>10}{sum(reached.values()):>11}")
    print("(exercised: the step was reached / the interrupt fired / the tool ran)")
    if failures:
        print()
        print("first failures (replay: --seed SEED --runs 1):")
        for seed, scenario, report in failures[: args.show]:
            print(f"  seed {seed}: {report.reason()}")
            print(f"    {scenario.describe()}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
