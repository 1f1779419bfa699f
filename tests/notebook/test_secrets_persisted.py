"""A key the model echoes never reaches anything a turn persists (issue #39 §0).

A real kernel has a key in its environment; a scripted model echoes it in its answer, in a
tool call's code and in a tool result. The notebook is saved with widget state, the turn
and a ``%%compare`` are exported or recorded, and then every byte written under the test's
folder (the notebook, the extension's data folder with its SQLite files, the exported test
and its JSON) is searched for the key. The saved notebook then replays in a fresh kernel
with no key at all, showing the mask the live view showed, and the exported test passes
on its masked recording.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from jupyter_brain.agent.redact import MASK

from ..kernel_notebooks import drop_keys, execute, load_extension
from .test_export_test import pytest_outcomes

# No known key format: only its value in the environment says it is a secret.
KEY = "gw-test-4f8a1c9e2b7d6035aa91"

SETUP = """\
import os
from jupyter_brain.providers.scripted import ScriptedProvider
K = os.environ["ANTHROPIC_API_KEY"]
values = [10.0, 13.6]
bot = ScriptedProvider([
    {"text": "Checking the key " + K + " first.",
     "tool_calls": [{"name": "run_python", "arguments": {"code": "print('" + K + "'); m = sum(values) / len(values)"}}]},
    "The mean is 11.8, and your key is " + K + ".",
])
judge_bot = ScriptedProvider(["Final Answer: the key is " + K + "."], repeat=True)
"""


def _files_holding(folder: Path, needle: bytes) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


@pytest.mark.kernel
def test_an_echoed_key_is_in_no_file_and_the_saved_notebook_replays_the_mask(tmp_path, monkeypatch):
    drop_keys(monkeypatch)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    out = tmp_path / "exported"
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(load_extension(tmp_path / "jb")),
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_code_cell("%%agent --provider bot --permission auto\nWhat is the mean of values?"),
        nbformat.v4.new_code_cell(f"%agent export-test -1 {out}/test_leak.py"),
        nbformat.v4.new_code_cell("%%compare --provider judge_bot --strategies react,cot\nWhat is my key?"),
    ]
    execute(nb, tmp_path, timeout=180, store_widget_state=True)
    saved = tmp_path / "leak.ipynb"
    nbformat.write(nb, saved)

    assert "wrote " in nb.cells[3].outputs[0].text
    agent_meta = [o.get("metadata", {}).get("jupyter_brain") for o in nb.cells[2].outputs]
    recording = next(m["recording"] for m in agent_meta if m and "recording" in m)
    assert MASK in str(recording), "the echoed key is masked in the recording, not dropped"
    compare_meta = [o.get("metadata", {}).get("jupyter_brain") for o in nb.cells[4].outputs]
    assert any(m and m.get("recordings") for m in compare_meta), "the comparison saved its recordings"
    assert _files_holding(tmp_path, KEY.encode()) == []

    # Another machine: no key anywhere. The saved recording replays, showing the mask.
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    again = nbformat.read(saved, as_version=4)
    again.cells[1].source = again.cells[1].source.replace('os.environ["ANTHROPIC_API_KEY"]', '"no-key-here"')
    execute(again, tmp_path, timeout=180)
    shown = "".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("data", {}).get("text/markdown", ""))
                    for o in again.cells[2].outputs)
    assert "replayed" in shown and MASK in shown and "no-key-here" not in shown
    outcomes = pytest_outcomes(out)
    assert outcomes["test_leak"] == "passed"
