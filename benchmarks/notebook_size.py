"""Saved bytes per ``%%agent`` cell of a 10-agent-cell notebook, with and without widget state.

Each notebook is executed by nbclient (what nbconvert and papermill use) in a fresh kernel
with the offline scripted provider; one turn makes a figure. "With widget state" is
``store_widget_state=True`` (their default; JupyterLab's "Save widget state" keeps the same
models). Per agent cell: the bytes the agent cells add to the file (the notebook, less the
same notebook without their outputs and without widget state), and what is left beyond
the turn's own text and figures (its Markdown transcript). "before" runs the same
notebook with the old ending (the live widget kept, its state holding the view's JS and
CSS); "after" is this tree's (the finished turn as a data bundle, the widget retired).

Goal: <= 20 KB per agent cell beyond the turn's text and figures, with widget state.
Prints; asserts nothing.

    python benchmarks/notebook_size.py [--cells 10]
"""

from __future__ import annotations

import argparse
import copy
import json
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

TURN_MIME = "application/vnd.jupyter-brain.turn+json"
GOAL = 20_000

SETUP = """%load_ext jupyter_brain
%matplotlib inline
import pandas as pd
from jupyter_brain import ScriptedProvider
%config AgentMagics.permission = "auto"
%config AgentMagics.data_dir = {data_dir!r}
code = ("sales = pd.DataFrame({{'month': ['Jan', 'Feb', 'Mar'], 'revenue': [120, 135, 90]}})\\n"
        "sales.plot(x='month', y='revenue')\\n"
        "sales")
plot_bot = ScriptedProvider([
    {{"text": "Plotting.", "tool_calls": [{{"name": "run_python", "arguments": {{"code": code}}}}]}},
    "**March** is lowest: revenue fell from $135 to $90.",
])
bot = ScriptedProvider(["<think>compare the months</think>Revenue fell from $57,100 to $44,900 in **March**."] * 50)
"""

# The ending before issue #24: the finished turn re-published as the live widget (its
# model state carries the view's JS and CSS) plus the Markdown fallback.
OLD_ENDING = """
import jupyter_brain.notebook.agent_cell as _cell
def _old_close_view(view):
    release = getattr(view, "release_outputs", None)
    if release is not None:
        release()
    view.close_stream()
    view.display_handle.update(view)
_cell.close_view = _old_close_view
"""


def build(cells: int, data_dir: Path, old: bool) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP.format(data_dir=str(data_dir)) + (OLD_ENDING if old else ""))]
    nb.cells.append(nbformat.v4.new_code_cell("%%agent --provider plot_bot\nPlot the revenue by month."))
    nb.cells += [nbformat.v4.new_code_cell(f"%%agent --provider bot --think low\nWhich month dropped most? ({i})")
                 for i in range(1, cells)]
    return nb


def measure(cells: int, *, old: bool, widget_state: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        nb = build(cells, Path(tmp) / "jb", old)
        NotebookClient(nb, timeout=300, kernel_name="python3", store_widget_state=widget_state,
                       resources={"metadata": {"path": tmp}}).execute()
    return saved_sizes(nb, cells)


def saved_sizes(nb: nbformat.NotebookNode, cells: int) -> dict[str, float]:
    """What an executed notebook's ``cells`` agent cells (those after the first cell) add
    to its file, per cell: in all, and beyond their Markdown transcripts."""
    bare = copy.deepcopy(nb)
    bare.metadata.pop("widgets", None)
    for cell in bare.cells[1:]:
        cell.outputs = []
    total = len(nbformat.writes(nb))
    added = total - len(nbformat.writes(bare))
    markdown = [o["data"]["text/markdown"] for c in nb.cells[1:] for o in c.outputs if "text/markdown" in o.get("data", {})]
    own = sum(len(json.dumps(m)) for m in markdown)
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    return {"total": total, "per_cell": added / cells, "beyond": (added - own) / cells, "models": len(state),
            "figure_copies": nbformat.writes(nb).count("iVBORw0KGgo")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=10)
    args = parser.parse_args()
    print(f"a notebook with {args.cells} %%agent cells (one makes a figure), executed by nbclient")
    print(f"{'':8} {'widget state':>12} {'file':>11} {'per agent cell':>15} {'beyond text+figures':>20} "
          f"{'widget models':>14} {'figure copies':>14}")
    for old in (True, False):
        for widget_state in (True, False):
            m = measure(args.cells, old=old, widget_state=widget_state)
            print(f"{'before' if old else 'after':8} {'saved' if widget_state else 'not saved':>12} "
                  f"{m['total'] / 1000:>8.1f} KB {m['per_cell'] / 1000:>12.1f} KB {m['beyond'] / 1000:>17.1f} KB "
                  f"{m['models']:>14} {m['figure_copies']:>14}")
    print(f"goal: <= {GOAL / 1000:.0f} KB per agent cell beyond its text and figures, with widget state")


if __name__ == "__main__":
    main()
