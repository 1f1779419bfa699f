"""#13 in a real kernel: a figure and a table the agent's code made appear once — inside
the finished turn's tool row — and not again as outputs of the cell (#24: the figure's
bytes are stored once, in the Markdown fallback, which the turn's JSON points into)."""

from __future__ import annotations

import json

import nbformat
import pytest
from nbclient import NotebookClient

from ..kernel_notebooks import drop_keys

pytestmark = pytest.mark.kernel

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
bot = ScriptedProvider([
    {{"text": "Plotting.", "tool_calls": [{{"name": "run_python", "arguments": {{"code": code}}}}]}},
    "**February** is lower.",
])"""


def test_a_figure_made_by_the_agent_appears_once(tmp_path, monkeypatch):
    drop_keys(monkeypatch)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP.format(data_dir=str(tmp_path / "jb"))),
        nbformat.v4.new_code_cell("%%agent --provider bot\nPlot the revenue."),
        nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nprint(_agent.status, plt.get_fignums())"),
    ]
    client = NotebookClient(nb, timeout=120, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = nb.cells[1].outputs
    assert [o.output_type for o in outputs] == ["display_data"], outputs  # the widget, nothing else
    assert "image/png" not in outputs[0].data
    assert nb.cells[2].outputs[0].text.strip() == "completed []"
    turn = outputs[0].data["application/vnd.jupyter-brain.turn+json"]
    figures = [i for e in turn["transcript"] for i in e.get("images") or []]
    assert figures == ["markdown-image:0"]  # the tool row points at the Markdown's figure
    assert outputs[0].data["text/markdown"].count("data:image/png;base64,") == 1
    assert nbformat.writes(nb).count("iVBORw0KGgo") == 1  # a PNG's first bytes: one copy in the file
    assert "<td>120</td>" in json.dumps(turn)  # the DataFrame's table, in the tool row
