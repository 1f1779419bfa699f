"""The text of an exported turn's test (``evals/export_test.py``): valid Python a reader can
follow, whatever the prompt holds; where it goes; what it refuses (#27)."""

from __future__ import annotations

import ast

import pytest

from jupyter_brain.evals.export_test import ExportChecks, ExportError, TurnSource, exported_test_path, write_test

RECORDING = {"cell": "k", "calls": [{"fp": "f", "response": {"text": "ok"}}]}


@pytest.mark.parametrize("prompt", ['Say """hi"""', "A path C:\\new\\table", "Two\nlines", 'ends with a quote"', "é ✓"])
def test_any_prompt_makes_a_valid_file_that_holds_it(tmp_path, prompt):
    source = TurnSource(session="s", turn_number=3, flags="--provider bot", prompt=prompt, setup=["x = 1\ny = '''a'''"],
                        recording=RECORDING, answer=prompt)
    path = write_test(source, tmp_path / "test_t.py", checks=ExportChecks(("42",), ("x == 1",)))
    tree = ast.parse(path.read_text(encoding="utf-8"))
    values = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
              if isinstance(node, ast.Assign) and node.targets[0].id in ("PROMPT", "SETUP", "RECORDED_ANSWER")}
    assert values == {"PROMPT": prompt, "SETUP": ["x = 1\ny = '''a'''"], "RECORDED_ANSWER": prompt}
    assert (tmp_path / "test_t.json").is_file()


def test_where_the_file_goes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert exported_test_path(None, 4) == tmp_path / "test_turn_4.py"
    assert exported_test_path(tmp_path, 4) == tmp_path / "test_turn_4.py"
    assert exported_test_path("sub/", 4).name == "test_turn_4.py"
    assert exported_test_path("tests/test_mean.py", 4).name == "test_mean.py"
    with pytest.raises(ExportError, match=r"must end in \.py"):
        exported_test_path("notes.txt", 4)


def test_a_turn_without_a_recording_is_refused(tmp_path):
    with pytest.raises(ExportError, match="turn 2 has no recording"):
        write_test(TurnSource(turn_number=2, recording=None), tmp_path / "test_x.py")
    assert not list(tmp_path.iterdir())
