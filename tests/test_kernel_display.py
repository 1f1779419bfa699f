"""An %%agent cell in a real kernel, executed like nbconvert does: what the notebook keeps."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.kernel


def test_agent_output_keeps_widget_and_markdown_transcript(tmp_path, monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "%load_ext jupyter_brain\n"
            f"%config AgentMagics.data_dir = {str(tmp_path / 'jb')!r}\n"
            "from jupyter_brain import ScriptedProvider\n"
            "bot = ScriptedProvider(['<think>compare months</think>**March** dropped most.'])"
        ),
        nbformat.v4.new_code_cell("%%agent --provider bot --think low\nWhich month dropped most?"),
        nbformat.v4.new_code_cell("print(_agent.status)"),
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[1].outputs
    displays = [o for o in outputs if o.output_type == "display_data"]
    assert len(displays) == 1, outputs
    data = displays[0].data
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "status='completed'" in data["text/plain"]
    markdown = data["text/markdown"]
    assert "**March** dropped most." in markdown and "compare months" in markdown
    assert nb.cells[2].outputs[0].text.strip() == "completed"
