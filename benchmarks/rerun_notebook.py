"""A 10-``%%agent``-cell notebook that re-runs: the four figures of issue #24 in one run.

A generated notebook (a setup cell, 10 ``%%agent`` cells answered by a scripted provider
that counts its calls, the first one running a tool) is executed headless by nbclient
(what nbconvert and papermill use):

1. **Live, once**: executed in a fresh kernel and saved; the turns' recordings go into the
   agent outputs' metadata.
2. **Run All with replay**: the saved notebook, copied into a fresh folder (no event log:
   another machine), is executed in a fresh kernel. Wall time of the whole run (kernel start
   included) against the kernel start alone (the same notebook with only its setup cell),
   the difference per agent cell, and the provider calls it made (goal 0).
3. **Saved bytes per agent cell**, with and without widget state (``notebook_size.py``'s
   measurement; goal <= 20 KB beyond the turn's text and figures, with widget state).
4. **Headless first-turn latency** beyond the provider (``headless_first_turn.py``'s
   measurement, warm variant; goal <= 100 ms).

Every figure is the median of ``--runs`` fresh kernels (the machine is shared: the load
average is printed beside them). Prints; asserts nothing.

    python benchmarks/rerun_notebook.py [--runs 3] [--cells 10]

Sample output (2 shared cores under heavy load from other jobs, --runs 3; on a busy
machine the times vary by 2x between runs, so compare revisions with revisions.py):

    a notebook with 10 %%agent cells, executed headless by nbclient; medians of 3 fresh kernels
    load average before: 19.12 17.07 12.99
      Run All with replay        8.06 s   (kernel start + setup alone 3.14 s; +491 ms per agent cell)
      provider calls             0        (live run: 11; goal 0)   turns replayed: 10 of 10
      saved per agent cell         6.8 KB with widget state (6.4 KB beyond its text and figures; 20 widget models)
      saved per agent cell         4.2 KB without           (3.8 KB beyond its text and figures; 0 widget models)
                                 goal <= 20 KB beyond text and figures, with widget state
      headless first turn        293 ms beyond the provider (second turn 334 ms; goal <= 100 ms)
    load average after: 13.63 15.59 12.82

The per-cell Run All figure includes what the first agent cell loads once per kernel: the
agent core and the tokenizer (tiktoken's cl100k, about 1 s of it).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from headless_first_turn import run_once as first_turn_once
from nbclient import NotebookClient
from notebook_size import GOAL as SIZE_GOAL
from notebook_size import saved_sizes

LATENCY_GOAL_MS = 100

SETUP = """\
%load_ext jupyter_brain
%config AgentMagics.permission = "auto"
from jupyter_brain import ScriptedProvider


class CountingProvider(ScriptedProvider):
    \"\"\"A scripted provider that counts the model calls made to it.\"\"\"

    calls = 0

    def generate_stream(self, *args, **kwargs):
        CountingProvider.calls += 1
        yield from super().generate_stream(*args, **kwargs)

    def generate(self, *args, **kwargs):
        CountingProvider.calls += 1
        return super().generate(*args, **kwargs)


tool_bot = CountingProvider([
    {"text": "Making it.", "tool_calls": [{"name": "run_python", "arguments": {"code": "total = 120 + 135 + 90"}}]},
    "The total is **345**.",
])
bot = CountingProvider(["Revenue fell most in **March**: from 135 to 90."] * 50)
"""
REPORT = """\
import json
_m = get_ipython().magics_manager.registry["AgentMagics"]
_results = _m.manager.current.results if _m._manager is not None else []
print(json.dumps({"calls": CountingProvider.calls, "replayed": sum(r.replay == "replayed" for r in _results),
                  "turns": len(_results), "total": globals().get("total")}))
"""


def build(cells: int) -> nbformat.NotebookNode:
    """Setup, ``cells`` agent cells (the first runs a tool), the report cell."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP),
                nbformat.v4.new_code_cell("%%agent --provider tool_bot\nAdd up the revenue of the three months.")]
    nb.cells += [nbformat.v4.new_code_cell(f"%%agent --provider bot\nWhich month dropped most? (question {i})")
                 for i in range(1, cells)]
    nb.cells.append(nbformat.v4.new_code_cell(REPORT))
    return nb


def execute(nb: nbformat.NotebookNode, folder: Path, *, widget_state: bool = True) -> tuple[float, dict[str, Any]]:
    """Execute ``nb`` in a fresh kernel started in ``folder``: wall time (kernel start
    included) and what its last cell printed. ``widget_state``: saved in the notebook's
    metadata, as nbclient, nbconvert and papermill do by default."""
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", store_widget_state=widget_state,
                   resources={"metadata": {"path": str(folder)}}).execute()
    wall = time.perf_counter() - start
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    return wall, json.loads(text.strip().splitlines()[-1]) if text.strip() else {}


def record(cells: int, folder: Path, *, widget_state: bool = True) -> tuple[nbformat.NotebookNode, dict[str, Any]]:
    """The notebook run once live and saved (its recordings in the agent outputs)."""
    nb = build(cells)
    _, report = execute(nb, folder, widget_state=widget_state)
    nbformat.write(nb, folder / "rerun.ipynb")
    return nb, report


def sizes(nb: nbformat.NotebookNode, cells: int) -> dict[str, float]:
    """``notebook_size.py``'s figures for the agent cells (the report cell left out)."""
    agent_cells = copy.deepcopy(nb)
    agent_cells.cells = agent_cells.cells[:-1]
    return saved_sizes(agent_cells, cells)


def run_all(saved: nbformat.NotebookNode, *, setup_only: bool) -> tuple[float, dict[str, Any]]:
    """Run All of the saved notebook (or of its setup alone) in a fresh folder and kernel."""
    nb = copy.deepcopy(saved)
    if setup_only:
        nb.cells = [nb.cells[0], nb.cells[-1]]
    with tempfile.TemporaryDirectory(prefix="jb-rerun-") as tmp:
        nbformat.write(nb, Path(tmp) / "rerun.ipynb")  # recordings are found in the notebook's folder
        return execute(nb, Path(tmp))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh kernels per figure (median)")
    parser.add_argument("--cells", type=int, default=10, help="%%%%agent cells in the notebook")
    args = parser.parse_args()
    print(f"a notebook with {args.cells} %%agent cells, executed headless by nbclient; "
          f"medians of {args.runs} fresh kernels")
    print(f"load average before: {load()}")
    with tempfile.TemporaryDirectory(prefix="jb-live-") as tmp:
        saved, live = record(args.cells, Path(tmp))
    with tempfile.TemporaryDirectory(prefix="jb-live-") as tmp:
        without_state = sizes(record(args.cells, Path(tmp), widget_state=False)[0], args.cells)
    with_state = sizes(saved, args.cells)
    full, bare, reports = [], [], []
    for _ in range(args.runs):  # taking turns, so a burst of load falls on both
        wall, report = run_all(saved, setup_only=False)
        full.append(wall)
        reports.append(report)
        bare.append(run_all(saved, setup_only=True)[0])
    replayed = min(r.get("replayed", 0) for r in reports)
    same = all(r.get("total") == live.get("total") for r in reports)
    run_s, bare_s = statistics.median(full), statistics.median(bare)
    print(f"  Run All with replay        {run_s:.2f} s   (kernel start + setup alone {bare_s:.2f} s; "
          f"+{(run_s - bare_s) * 1000 / args.cells:.0f} ms per agent cell)")
    print(f"  provider calls             {max(r.get('calls', -1) for r in reports)}        "
          f"(live run: {live.get('calls')}; goal 0)   turns replayed: {replayed} of {args.cells}"
          f"{'' if same else '   (the tool made a different variable!)'}")
    for label, size in (("with widget state", with_state), ("without", without_state)):
        print(f"  saved per agent cell       {size['per_cell'] / 1000:5.1f} KB {label:17} "
              f"({size['beyond'] / 1000:.1f} KB beyond its text and figures; {size['models']:.0f} widget models)")
    print(f"                             goal <= {SIZE_GOAL / 1000:.0f} KB beyond text and figures, with widget state")
    turns = [first_turn_once(warm=True) for _ in range(args.runs)]
    print(f"  headless first turn        {statistics.median(t['first_ms'] for t in turns):.0f} ms beyond the provider "
          f"(second turn {statistics.median(t['second_ms'] for t in turns):.0f} ms; goal <= {LATENCY_GOAL_MS} ms)")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
