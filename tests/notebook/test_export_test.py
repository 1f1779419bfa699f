"""``%agent export-test`` and ``TurnResult.to_test()``: a turn becomes a pytest file that
replays its recording (or runs live) and asserts its checks (#27).

The exported files are run by pytest in a subprocess, as a user would run them: each
test here says which of its exported tests must pass and which must fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from jupyter_brain.agent.results import TurnResult
from jupyter_brain.notebook import turn_export

from ..kernel_notebooks import drop_keys, execute, load_extension

ROOT = Path(__file__).resolve().parents[2]
SCRIPTED = "from jupyter_brain.providers.scripted import ScriptedProvider\n"
TOOL_TURN = (SCRIPTED + "bot = ScriptedProvider([\n"
             "    {'text': '', 'tool_calls': [{'name': 'run_python', 'arguments': {'code': "
             "'answer_value = sum(values) / len(values)\\nprint(answer_value)'}}]},\n"
             "    'The mean is 11.8.'])")


def run(shell, code: str) -> None:
    """A cell as the kernel runs it: kept in the input history (the export's setup)."""
    result = shell.run_cell(code, store_history=True)
    if result.error_in_exec is not None or result.error_before_exec is not None:
        raise result.error_in_exec or result.error_before_exec


def pytest_outcomes(folder: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """Run pytest on ``folder`` in a subprocess: ``{test file name: passed | failed}``, and
    each failure's message."""
    report = folder / "report.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                    f"--junitxml={report}", str(folder)], cwd=folder, capture_output=True, text=True, timeout=600,
                   env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                        **(env or {})})
    import xml.etree.ElementTree as ET

    outcomes = {}
    for case in ET.parse(report).iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        name = case.get("classname", "").split(".")[-1]
        outcomes[name] = "passed" if failure is None else "failed: " + (failure.get("message") or "")
    return outcomes


def edit_recorded_answer(case: Path, old: str, new: str) -> None:
    data = json.loads(case.read_text(encoding="utf-8"))
    for call in data["recording"]["calls"]:
        if call["response"].get("text") == old:
            call["response"]["text"] = new
    case.write_text(json.dumps(data), encoding="utf-8")


def test_an_exported_turn_passes_on_its_recording_and_fails_when_the_answer_is_edited(shell, tmp_path):
    run(shell, SCRIPTED + "bot = ScriptedProvider(['The mean is 11.8.'])\nvalues = [10.0, 13.6]")
    run(shell, "%%agent --provider bot\nWhat is the mean of {values}?")
    out = tmp_path / "exported"
    run(shell, f"%agent export-test 1 {out}/test_answer.py")  # no checks: the recorded answer
    run(shell, f"%agent export-test -1 {out}/test_checks.py --expect 11.8 --check 'abs(sum(values) / 2 - 11.8) < 0.1'")
    run(shell, f"_agent.to_test({str(out / 'test_edited.py')!r})")
    run(shell, f"_agent.to_test({str(out / 'test_prompt.py')!r}, checks={{'expect': ['11.8']}})")
    edit_recorded_answer(out / "test_edited.json", "The mean is 11.8.", "The mean is 12.5.")
    prompt_test = out / "test_prompt.py"
    prompt_test.write_text(prompt_test.read_text().replace("What is the mean", "What is the median"))

    text = (out / "test_checks.py").read_text()
    assert "PROMPT = 'What is the mean of {values}?'" in text and "values = [10.0, 13.6]" in text  # readable
    assert "turn.assert_check('abs(sum(values) / 2 - 11.8) < 0.1')" in text

    outcomes = pytest_outcomes(out)
    assert outcomes["test_answer"] == "passed" and outcomes["test_checks"] == "passed"
    assert "the answer changed: expected 'The mean is 11.8.', got 'The mean is 12.5.'" in outcomes["test_edited"]
    assert "the prompt changed" in outcomes["test_prompt"]  # strict replay: no model call, says what changed


def test_a_tool_turn_replays_with_its_setup_and_checks_the_namespace_it_left(shell, tmp_path):
    run(shell, TOOL_TURN)
    run(shell, "values = [10.0, 13.6]")
    run(shell, "%%agent --provider bot --permission auto\nWhat is the mean of values?")
    assert shell.user_ns["answer_value"] == pytest.approx(11.8)
    out = tmp_path / "exported"
    run(shell, f"%agent export-test 1 {out}/test_tool.py --check 'abs(answer_value - 11.8) < 0.01'")
    run(shell, f"%agent export-test 1 {out}/test_changed_setup.py --check 'abs(answer_value - 11.8) < 0.01'")
    changed = out / "test_changed_setup.py"
    changed.write_text(changed.read_text().replace("values = [10.0, 13.6]", "values = [10.0, 14.6]"))

    outcomes = pytest_outcomes(out)
    assert outcomes["test_tool"] == "passed"
    assert "the result of tool call 1 (run_python) changed" in outcomes["test_changed_setup"]


def test_a_later_turn_gets_the_history_and_the_code_earlier_turns_ran(shell, tmp_path):
    run(shell, TOOL_TURN + "\nvalues = [10.0, 13.6]")
    run(shell, SCRIPTED + "bot2 = ScriptedProvider([\n"
               "    {'text': '', 'tool_calls': [{'name': 'run_python', 'arguments': {'code': "
               "'print(round(answer_value, 1))'}}]},\n"
               "    'Rounded: 11.8.'])")
    run(shell, "%%agent --provider bot --permission auto\nWhat is the mean of values?")
    run(shell, "%%agent --provider bot2 --permission auto\nRound it.")  # reads turn 1's answer_value
    out = tmp_path / "exported"
    run(shell, f"%agent export-test 2 {out}/test_second.py --check 'round(answer_value, 1) == 11.8'")
    text = (out / "test_second.py").read_text()
    assert "# run by the agent's turn in In [" in text  # turn 1's run_python code is setup
    assert "answer_value = sum(values) / len(values)\nprint(answer_value)\"\"\"," in text
    history = json.loads((out / "test_second.json").read_text())["history"]
    assert [m["role"] for m in history][:1] == ["user"] and history[0]["content"] == "What is the mean of values?"
    assert pytest_outcomes(out) == {"test_second": "passed"}


def test_live_asks_the_provider_instead_of_the_recording(shell, tmp_path):
    run(shell, SCRIPTED + "bot = ScriptedProvider(['The mean is 11.8.'])\nvalues = [10.0, 13.6]")
    run(shell, "%%agent --provider bot\nWhat is the mean of {values}?")
    out = tmp_path / "exported"
    run(shell, f"%agent export-test 1 {out}/test_live.py --live --expect 11.8")
    run(shell, f"%agent export-test 1 {out}/test_replayed.py --expect 11.8")
    for name in ("test_live", "test_replayed"):  # the recording now says something else
        edit_recorded_answer(out / f"{name}.json", "The mean is 11.8.", "The mean is 12.5.")

    outcomes = pytest_outcomes(out)
    assert outcomes["test_live"] == "passed"  # the scripted provider the setup defines answered
    assert "the answer's numbers: 12.5" in outcomes["test_replayed"]
    env_live = pytest_outcomes(out, {"JUPYTER_BRAIN_LIVE": "1"})  # the env var makes the replayed one live
    assert env_live["test_replayed"] == "passed"


def test_bad_input_is_one_line_error(shell, tmp_path):
    with pytest.raises(UsageError, match="the session has no turns yet"):
        shell.run_line_magic("agent", "export-test -1")
    run(shell, SCRIPTED + "bot = ScriptedProvider(['ok'])")
    run(shell, "%%agent --provider bot\nSay ok.")
    cases = {
        "export-test": "which turn\\?",
        "export-test 2": "no turn 2; the session has turns 1-1",
        "export-test 0": "no turn 0",
        "export-test last": "N must be a turn number or -1",
        "export-test 1 notes.txt": "must end in .py",
        f"export-test 1 {tmp_path}/file.txt/test_x.py": "cannot write",
        "export-test 1 --check 'x ==' ": "is not a Python expression",
        "export-test 1 --frobnicate": "unrecognized arguments",
    }
    (tmp_path / "file.txt").write_text("a file, not a folder")
    for line, message in cases.items():
        with pytest.raises(UsageError, match=message) as info:
            shell.run_line_magic("agent", line)
        assert "\n" not in str(info.value)
    log = shell.magics_manager.registry["AgentMagics"].manager.event_log
    turn_export._turns.clear()  # as after a restart: an earlier kernel's turn, from the log …
    with log._db_lock:
        log._db.execute("DELETE FROM records WHERE kind = 'recording'")  # … which has no recording of it
    with pytest.raises(UsageError, match="turn 1 has no recording in the event log"):
        shell.run_line_magic("agent", "export-test 1")


def test_an_earlier_kernels_turn_is_rebuilt_from_the_event_log(shell, tmp_path, capsys):
    run(shell, SCRIPTED + "bot = ScriptedProvider(['Hello.', 'The mean is 11.8.'])\nvalues = [10.0, 13.6]")
    run(shell, "%%agent --provider bot --think low\nSay hello.")
    run(shell, "%%agent --provider bot --think low\nWhat is the mean of {values}?")
    turn_export._turns.clear()  # as after a restart: only the event log knows the turns
    out = tmp_path / "exported"
    run(shell, f"%agent export-test 2 {out}/test_from_log.py --expect 11.8")
    assert "ran in an earlier kernel: its setup cells are not known" in capsys.readouterr().out
    text = (out / "test_from_log.py").read_text()
    assert "FLAGS = '--provider bot --think low'" in text and "SETUP = [\n]" in text
    assert "PROMPT = 'What is the mean of [10.0, 13.6]?'" in text  # as it was sent
    assert pytest_outcomes(out) == {"test_from_log": "passed"}  # its history (turn 1) came from the log too


def test_to_test_needs_a_notebook_turn():
    result = TurnResult(session_id="s", turn_id="t", status="completed", text="hi")
    with pytest.raises(ValueError, match="cannot be written as a test"):
        result.to_test()


def test_setup_leaves_out_our_own_cells_and_lines():
    from types import SimpleNamespace

    history = ["", "%load_ext jupyter_brain", "import pandas as pd\n%agent sessions\nx = 1",
               "%%agent\nhi", "%%compare\nhi", "%agent cost", "y = 2", "%%agent\nthe running cell"]
    shell = SimpleNamespace(history_manager=SimpleNamespace(input_hist_raw=history), execution_count=7)
    assert turn_export.setup_cells(shell) == ["import pandas as pd\nx = 1", "y = 2"]
    assert turn_export.exported_flags("--provider bot --session s1 --new --rerun --replay strict --think low") == \
        "--provider bot --think low"


@pytest.mark.kernel
def test_in_a_real_kernel_the_exported_turn_replays_with_its_setup(tmp_path, monkeypatch):
    """nbclient drives a real kernel (ipykernel's input history is the setup): the exported
    test passes on its recording and fails once the recorded answer is edited."""
    import nbformat

    drop_keys(monkeypatch)
    out = tmp_path / "exported"
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(load_extension(tmp_path / 'jb')),
        nbformat.v4.new_code_cell(TOOL_TURN + "\nvalues = [10.0, 13.6]"),
        nbformat.v4.new_code_cell("%%agent --provider bot --permission auto\nWhat is the mean of values?"),
        nbformat.v4.new_code_cell(f"%agent export-test -1 {out}/test_kernel.py --expect 11.8 "
                                  "--check 'abs(answer_value - 11.8) < 0.01'"),
        nbformat.v4.new_code_cell(f"%agent export-test -1 {out}/test_edited.py"),
    ]
    execute(nb, tmp_path, timeout=180)
    assert "wrote " in nb.cells[3].outputs[0].text
    setup = (out / "test_kernel.py").read_text()
    assert "values = [10.0, 13.6]" in setup and "load_ext" not in setup
    edit_recorded_answer(out / "test_edited.json", "The mean is 11.8.", "The mean is 12.5.")
    outcomes = pytest_outcomes(out)
    assert outcomes["test_kernel"] == "passed"
    assert "the answer changed" in outcomes["test_edited"]
