"""scripts/check_newcomer.py's offline checks fail when they should: a notebook that reaches
the network, a turn a live model answered, a recording a live provider made.

CI runs every example notebook once through that script, in the environment scripts/lab.sh
builds; these tests make sure that pass can fail.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("check_newcomer", ROOT / "scripts" / "check_newcomer.py")
assert _spec and _spec.loader
check_newcomer = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_newcomer)

nbformat = pytest.importorskip("nbformat")

FINISHED_TURN = "_agent = __import__('types').SimpleNamespace(status='completed')"


def agent_cell(label: str, provider: str):
    cell = nbformat.v4.new_code_cell("%%agent\nWhich month?")
    cell.outputs = [nbformat.v4.new_output(
        "display_data",
        data={"text/markdown": f"### Agent \u2014 Turn 1 \u00b7 {label} \u00b7 tokens in 10 / out 5\n\nMarch."},
        metadata={"jupyter_brain": {"recording": {"provider": provider, "events": []}}},
    )]
    return cell


def test_turns_answered_and_recorded_by_scripted_models_or_replays_pass():
    nb = nbformat.v4.new_notebook(cells=[agent_cell("scripted", "scripted"),
                                         agent_cell("replayed/scripted", "scripted")])
    assert check_newcomer.answered_offline(nb) == []


def test_a_live_models_turn_or_recording_is_reported():
    nb = nbformat.v4.new_notebook(cells=[agent_cell("claude-sonnet-4-5", "anthropic")])
    assert check_newcomer.answered_offline(nb) == [
        "a turn was answered by claude-sonnet-4-5", "a turn was recorded from anthropic"]


def test_agent_cells_with_no_finished_turn_or_recording_are_reported():
    cell = nbformat.v4.new_code_cell("%%agent\nWhich month?")
    assert check_newcomer.answered_offline(nbformat.v4.new_notebook(cells=[cell])) == [
        "no %%agent cell shows a finished turn", "no %%agent cell's output carries its recording"]


def notebook_in(folder: Path, *sources: str) -> Path:
    """A notebook beside a stand-in ``demo_models`` (no live model), as in notebooks/."""
    (folder / "demo_models.py").write_text("def live():\n    return False\n")
    path = folder / "check.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.write_text(json.dumps(nb))
    return path


@pytest.mark.kernel
def test_a_notebook_that_reaches_the_network_fails_and_one_that_does_not_passes(tmp_path):
    reaching = notebook_in(tmp_path, FINISHED_TURN, (
        "import urllib.request\n"
        "try:\n"
        "    urllib.request.urlopen('http://example.com', timeout=2)\n"
        "except OSError as exc:\n"
        "    print('refused:', exc)\n"))
    problems = check_newcomer.run_notebook(reaching)
    assert len(problems) == 1 and "the offline check run last" in problems[0], problems
    assert "the notebook tried to reach ['example.com']" in problems[0]

    quiet = notebook_in(tmp_path, FINISHED_TURN, "print(sum(range(10)))")
    assert check_newcomer.run_notebook(quiet) == []


@pytest.mark.kernel
def test_a_failing_cell_is_named_by_its_place_in_the_users_notebook(tmp_path):
    path = notebook_in(tmp_path, FINISHED_TURN, "x = 1", "1 / 0")
    problems = check_newcomer.run_notebook(path)
    assert problems == ["cell 3 ('1 / 0') raised ZeroDivisionError: division by zero"], problems
