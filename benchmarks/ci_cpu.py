"""Where a test run's CPU time went, by process tree, from BSD process accounting.

``time -v bash .ci/run`` gives one total. Cutting CI time needs to know which part of the
run used it: llama.cpp's build, the newcomer check, Chromium, the fast tests. The kernel
records every process that ends, with its CPU time, pid and parent, when accounting is on.
This script reads those records and sums each process's CPU time with all its
descendants'. Chromium's helper processes are re-parented to init, so they show up as trees
of their own.

    apt-get install acct && accton /var/log/account/pacct   # as root, before the run
    d=$(mktemp -d) && git clone -q . "$d" && (cd "$d" && CI=true bash .ci/run)
    python benchmarks/ci_cpu.py --from 17:53:00 --to 18:03:30 [--depth 4] [--min 10]

``--from``/``--to`` bound the processes' start times (``date`` before and after the run).
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import subprocess
from collections import defaultdict
from dataclasses import dataclass

PACCT = "/var/log/account/pacct"
TICKS = 100  # dump-acct prints times in clock ticks


@dataclass
class Process:
    command: str
    cpu_s: float
    wall_s: float
    parent: int
    started: str  # HH:MM:SS


def read(pacct: str, start: str, end: str) -> dict[int, Process]:
    """The processes that started between ``start`` and ``end`` (HH:MM:SS), by pid."""
    out = subprocess.run(["dump-acct", pacct], capture_output=True, text=True, check=True).stdout
    found: dict[int, Process] = {}
    for line in out.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) < 15:
            continue
        started = f[14].split()[3]
        if start <= started <= end:
            found[int(f[9])] = Process(f[0], (float(f[2]) + float(f[3])) / TICKS, float(f[4]) / TICKS,
                                       int(f[10]), started)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="start", required=True, help="earliest start time, HH:MM:SS")
    parser.add_argument("--to", dest="end", required=True, help="latest start time, HH:MM:SS")
    parser.add_argument("--depth", type=int, default=4, help="levels of the tree to print")
    parser.add_argument("--min", dest="minimum", type=float, default=5.0, help="hide trees under this many CPU-s")
    parser.add_argument("--pacct", default=PACCT)
    args = parser.parse_args()

    procs = read(args.pacct, args.start, args.end)
    children: dict[int, list[int]] = defaultdict(list)
    for pid, proc in procs.items():
        children[proc.parent].append(pid)
    totals: dict[int, float] = {}

    def total(pid: int) -> float:  # recursive: process trees are a few levels deep
        if pid not in totals:
            totals[pid] = procs[pid].cpu_s + sum(total(c) for c in children[pid])
        return totals[pid]

    def show(pid: int, depth: int) -> None:
        proc = procs[pid]
        if total(pid) < args.minimum:
            return
        print(f"{'  ' * depth}{proc.command:<16} pid {pid:<7} start {proc.started} wall {proc.wall_s:7.1f} s"
              f"  own {proc.cpu_s:6.1f} CPU-s  tree {total(pid):7.1f} CPU-s")
        if depth < args.depth:
            for child in sorted(children[pid], key=lambda c: procs[c].started):
                show(child, depth + 1)

    roots = sorted((p for p, proc in procs.items() if proc.parent not in procs), key=lambda p: procs[p].started)
    for pid in roots:
        show(pid, 0)
    print(f"\nall processes: {sum(p.cpu_s for p in procs.values()):.1f} CPU-s")


if __name__ == "__main__":
    main()
