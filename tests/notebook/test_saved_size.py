"""#24 §4 in a real kernel: a notebook saved *with* widget state (nbclient's
``store_widget_state=True``, what nbconvert and papermill do) stays small — each finished
``%%agent`` turn is a data bundle, not a widget carrying the view's code — a re-run leaves
no orphaned view, a figure is stored once, and ``nbconvert --to markdown`` shows ``$``."""

from __future__ import annotations

import copy
import html
import json
import re

import nbformat
import pytest
from nbclient import NotebookClient

from ..kernel_notebooks import drop_keys

pytestmark = pytest.mark.kernel

TURN_MIME = "application/vnd.jupyter-brain.turn+json"
PER_CELL_LIMIT = 20_000

SETUP = """%load_ext jupyter_brain
%matplotlib inline
import pandas as pd
from jupyter_brain import ScriptedProvider
%config AgentMagics.permission = "auto"
%config AgentMagics.data_dir = {data_dir!r}
code = ("import matplotlib.pyplot as plt\\n"
        "sales = pd.DataFrame({{'month': ['Jan', 'Feb'], 'revenue': [120, 90]}})\\n"
        "sales.plot(x='month', y='revenue')\\n"
        "sales")
plot_bot = ScriptedProvider([
    {{"text": "Plotting.", "tool_calls": [{{"name": "run_python", "arguments": {{"code": code}}}}]}},
    "**February** is lower.",
])
bot = ScriptedProvider(["<think>compare the months</think>Revenue fell from $57,100 to $44,900 in **March**."] * 10)"""


def agent_cell(i: int) -> str:
    return f"%%agent --provider bot --think low\nWhich month dropped most? (question {i})"


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch):
    drop_keys(monkeypatch)


def run(tmp_path, sources: list[str], rerun: tuple[int, ...] = ()) -> nbformat.NotebookNode:
    """Execute the cells in one kernel, then the cells at ``rerun`` again, as a person
    re-running them would; widget state saved as nbconvert and papermill save it."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP.format(data_dir=str(tmp_path / "jb")))]
    nb.cells += [nbformat.v4.new_code_cell(s) for s in sources]
    client = NotebookClient(nb, timeout=120, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(tmp_path)}})
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        for index in rerun:
            client.execute_cell(nb.cells[index], index)
        client.set_widgets_metadata()
    return nb


def saved_state(nb: nbformat.NotebookNode) -> dict:
    return nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})


def turn_outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for c in nb.cells for o in c.get("outputs", []) if TURN_MIME in o.get("data", {})]


def test_saved_notebook_with_widget_state_costs_under_20_kb_per_agent_cell(tmp_path):
    nb = run(tmp_path, [agent_cell(i) for i in range(4)] + ["%%agent --provider plot_bot\nPlot the revenue."])
    turns = turn_outputs(nb)
    assert len(turns) == 5 and all(o["data"][TURN_MIME]["status"] == "completed" for o in turns)
    # What the agent cells add to the file: everything, less the same notebook without
    # their outputs and without widget state.
    bare = copy.deepcopy(nb)
    bare.metadata.pop("widgets", None)
    for cell in bare.cells[1:]:
        cell.outputs = []
    added = len(nbformat.writes(nb)) - len(nbformat.writes(bare))
    own = sum(len(json.dumps(o["data"]["text/markdown"])) for o in turns)  # the turns' text and figures
    assert (added - own) / len(turns) <= PER_CELL_LIMIT, (added, own)
    # No saved model carries the view's code or a transcript (its turn is in the output).
    for model in saved_state(nb).values():
        fields = model["state"]
        assert len(fields.get("_esm", "")) < 100 and not fields.get("_css") and not fields.get("transcript"), fields.keys()
    # The figure's bytes are in the file once (a PNG's base64 starts with iVBORw0KGgo).
    assert nbformat.writes(nb).count("iVBORw0KGgo") == 1


def test_a_rerun_cell_leaves_no_orphaned_view(tmp_path):
    nb = run(tmp_path, [agent_cell(0), agent_cell(1)], rerun=(1, 1, 2))
    for cell in nb.cells[1:]:  # one output per cell: its last run's turn
        assert [list(o["data"]) for o in cell.outputs] == [[TURN_MIME, "text/plain", "text/markdown"]]
    assert not [o for c in nb.cells for o in c.outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    # Every view was closed when its turn ended. nbclient keeps a closed model's last state
    # (it ignores comm_close; JupyterLab drops it): what is left is an empty stub, no code,
    # no transcript — a few hundred bytes, not the ~210 KB view of each earlier run.
    views = [m["state"] for m in saved_state(nb).values() if str(m["state"].get("_anywidget_id", "")).endswith("AgentView")]
    assert len(views) == 5
    assert all(len(json.dumps(v)) < 1_500 and not v["transcript"] for v in views), [len(json.dumps(v)) for v in views]


def test_markdown_export_shows_dollars_not_backslashes(tmp_path):
    from nbconvert import MarkdownExporter
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    nb = run(tmp_path, [agent_cell(0)])
    markdown, _ = MarkdownExporter().from_notebook_node(nb)
    assert "\\$" not in markdown
    assert "Revenue fell from" in markdown
    # Rendered as Markdown (nbconvert's own renderer), the amounts read as written.
    text = html.unescape(re.sub(r"<[^>]+>", "", markdown2html_mistune(markdown)))
    assert "Revenue fell from $57,100 to $44,900 in March." in text
