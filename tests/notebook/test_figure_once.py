"""#13 in a real kernel: a figure and a table the agent's code made appear once — inside
the widget's tool row (its synced transcript) — and not again as outputs of the cell."""

from __future__ import annotations

import json

import nbformat
import pytest
from nbclient import NotebookClient

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
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
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
    state = json.dumps(nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"])
    assert state.count("data:image/png;base64,") == 1  # the figure, in the tool row's entry
    assert "<td>120</td>" in state  # the DataFrame's table, too
