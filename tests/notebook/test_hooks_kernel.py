"""A user's hook in a real kernel (nbclient): defined in a notebook cell, attached with
``%agent hooks add``, it blocks a tool and adds a context layer in the next ``%%agent`` cell."""

from __future__ import annotations

import json

import nbformat
import pytest

from ..kernel_notebooks import drop_keys, execute
from .test_hooks_subcommand import HOOK_CELL

pytestmark = pytest.mark.kernel

SETUP = (
    "%load_ext jupyter_brain\n"
    "from jupyter_brain import ScriptedProvider\n"
    "bot = ScriptedProvider([\n"
    "    {'text': '', 'tool_calls': [{'id': 'd1', 'name': 'drop_table', 'arguments': {'name': 'sales'}}]},\n"
    "    'I did not drop it.',\n"
    "])\n"
)
REPORT = (
    "import json\n"
    "print(json.dumps({\n"
    "    'offered': [t['name'] for t in bot.calls[0]['tools']],\n"
    "    'statuses': [c.status for c in _agent.tool_calls],\n"
    "    'status': _agent.status,\n"
    "    'layers': [[m['content'] for m in c['messages'] if m.get('kind') == 'hook'] for c in bot.calls],\n"
    "}))"
)


def test_a_hook_from_a_notebook_cell_blocks_a_tool_and_adds_a_layer(tmp_path, monkeypatch) -> None:
    drop_keys(monkeypatch)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in (
        SETUP + f"%config AgentMagics.data_dir = {str(tmp_path / 'jb')!r}",
        HOOK_CELL,
        "%agent hooks add guard",
        "%%agent --provider bot --permission auto\nDrop the sales table.",
        REPORT,
    )]
    execute(nb, tmp_path)
    out = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    report = json.loads(out.strip().splitlines()[-1])
    assert "drop_table" not in report["offered"]
    assert report["statuses"] == ["blocked"] and report["status"] == "completed"
    assert report["layers"] == [["The data in use is sales_2024.csv."]] * 2
