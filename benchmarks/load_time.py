"""How long `%load_ext jupyter_brain` takes in a fresh IPython, and what it imports.

Goal: <= 150 ms, with no model SDK (anthropic, openai) and no widget library imported.
Each run is a new interpreter so nothing is cached in memory. Prints; asserts nothing.

    python benchmarks/load_time.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

PROBE = r"""
import json, sys, time
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
before = set(sys.modules)
start = time.perf_counter()
shell.run_line_magic("load_ext", "jupyter_brain")
elapsed = time.perf_counter() - start
new = set(sys.modules) - before
heavy = sorted(m for m in new if m.split(".")[0] in ("anthropic", "openai", "anywidget", "ipywidgets", "httpx"))
print(json.dumps({"ms": elapsed * 1000, "modules": len(new), "heavy": heavy}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    figures = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
        figures.append(json.loads(out.stdout.strip().splitlines()[-1]))
    ms = [f["ms"] for f in figures]
    print(f"%load_ext jupyter_brain over {args.runs} fresh interpreters (IPython already imported)")
    print(f"  median {statistics.median(ms):.1f} ms   min {min(ms):.1f} ms   max {max(ms):.1f} ms")
    print(f"  modules newly imported: {figures[0]['modules']}")
    print(f"  SDK / widget modules imported: {figures[0]['heavy'] or 'none'}")
    print("goal: <= 150 ms, no SDK or widget import")


if __name__ == "__main__":
    main()
