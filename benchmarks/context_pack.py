"""Cost of the context pack (``run_turn(top_k=...)``) on a synthetic working folder.

A folder of N Python/Markdown files and notebooks: the first search (scan, read, cut,
BM25 index), a search with nothing changed (a re-stamp of the folder only), and a search
after one file changed (that file read again, the BM25 model rebuilt). Prints figures;
asserts nothing.

    python benchmarks/context_pack.py [--files 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from jupyter_brain.agent.context_pack import WorkspaceIndex


def make_folder(root: Path, files: int) -> None:
    for i in range(files):
        sub = root / f"pkg{i % 20}"
        sub.mkdir(exist_ok=True)
        kind = i % 3
        if kind == 0:
            body = "\n\n".join(f"def f{i}_{j}(x):\n    \"\"\"Revenue helper {j} of module {i}.\"\"\"\n    return x * {j}"
                               for j in range(20))
            (sub / f"m{i}.py").write_text(body, encoding="utf-8")
        elif kind == 1:
            body = "\n\n".join(f"## Section {j}\n\nNotes on churn, cohort {j} and region {i}." for j in range(15))
            (sub / f"n{i}.md").write_text(body, encoding="utf-8")
        else:
            cells = [{"cell_type": "code", "source": f"df{j} = load('sales_{i}_{j}.csv')", "metadata": {},
                      "outputs": [], "execution_count": None} for j in range(10)]
            (sub / f"a{i}.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                         "nbformat_minor": 5}), encoding="utf-8")


def timed(label: str, fn) -> None:
    start = time.perf_counter()
    hits = fn()
    print(f"{label:<34} {1000 * (time.perf_counter() - start):8.1f} ms  ({len(hits)} hits)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_folder(root, args.files)
        index = WorkspaceIndex(root)
        timed("first search (index the folder)", lambda: index.search("churn cohort region", 8))
        stats = index.last_refresh
        print(f"  {stats.files} files, {stats.passages} passages")
        timed("search, nothing changed", lambda: index.search("revenue helper", 8))
        changed = next(root.rglob("*.md"))
        changed.write_text("## New\n\nInventory turnover.", encoding="utf-8")
        st = changed.stat()
        os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        timed("search after one file changed", lambda: index.search("inventory turnover", 8))
        print(f"  files read again: {index.last_refresh.read}")


if __name__ == "__main__":
    main()
