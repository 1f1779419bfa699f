"""%%compare's loose ends (#27): a --check time limit, big variables shared instead of
copied (and --no-copy), the judge's verdicts recorded and replayed, its cost in %agent cost."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from jupyter_brain.providers.scripted import ScriptedProvider
from tests.priced_providers import Priced

RIGHT = "Step 1: 6*7=42\nFinal Answer: 42"
ENDLESS = "sum(1 for _ in iter(int, 1))"


def compare(shell, line: str, cell: str = "What is 6*7?") -> Any:
    shell.run_cell_magic("compare", line, cell)
    return shell.user_ns["_compare"]


def test_an_endless_check_fails_as_timed_out_and_the_cell_goes_on(shell):
    shell.user_ns["bot"] = ScriptedProvider([RIGHT], repeat=True)
    result = compare(shell, f"--strategies cot --provider bot --check '{ENDLESS}' --check-timeout 0.3 --expect 42")
    (row,) = result.rows
    assert row["passed"] is False and row["reason"] == "check: timed out after 0.3 s"
    shell.run_line_magic("config", "AgentMagics.check_timeout = 0.2")  # the kernel's default
    again = compare(shell, f"--strategies cot --provider bot --check '{ENDLESS}'")
    assert again.rows[0]["reason"] == "check: timed out after 0.2 s"


def test_a_variable_over_the_limit_is_shared_read_only_with_a_note(shell, capsys):
    shell.run_cell("import numpy as np\narr = np.zeros(131072)\nsmall = [1, 2]")  # arr: 1 MB
    shell.run_line_magic("config", "AgentMagics.compare_copy_limit_mb = 0.5")
    shell.user_ns["bot"] = ScriptedProvider([RIGHT], repeat=True)
    result = compare(shell, "--strategies react,cot --provider bot --check 'not arr.flags.writeable'")
    out = capsys.readouterr().out
    assert ("note: not copied for each run, shared read-only: arr (1.0 MB), over "
            "AgentMagics.compare_copy_limit_mb = 0.5") in out
    assert [r["passed"] for r in result.rows] == [True, True]  # each run got a read-only view …
    assert np.shares_memory(result.namespace("cot")["arr"], shell.user_ns["arr"])  # … of the same data
    assert result.namespace("cot")["small"] is not shell.user_ns["small"]  # the small one is copied
    assert shell.user_ns["arr"].flags.writeable  # the user's own array is as it was


def test_no_copy_shares_every_variable_and_the_intact_check_still_reports(shell, capsys):
    shell.run_cell("kept = {'n': 1}")
    writes = "kept['n'] = 2"
    shell.user_ns["bot"] = ScriptedProvider([
        {"text": "Action: run_python", "tool_calls": [{"name": "run_python", "arguments": {"code": writes}}]},
        "Final Answer: done"])
    result = compare(shell, "--strategies react --provider bot --permission auto --no-copy")
    out = capsys.readouterr().out
    assert "note: --no-copy: the runs share your variables (bot, kept); a change one makes in place" in out
    assert shell.user_ns["kept"] == {"n": 2}  # shared: the run's change reached it
    assert result.namespace_changes == ["kept (changed)"]


WRONG = "Step 1: 6*7=41\nFinal Answer: 41"
JUDGED = "--strategies react,cot --provider bots --judge 'the product is right' --judge-provider judge"


def judge_reply(messages, tools):
    right = re.search(r"\b42\b", messages[-1]["content"].split("6*7", 1)[-1]) is not None  # the answer (#40)
    return {"text": "PASS\nsays 42" if right else "FAIL\nsays 41, not 42",
            "usage": {"input_tokens": 200, "output_tokens": 20}}


class JudgeMustNotCall(ScriptedProvider):
    name = "anthropic"

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        pytest.fail("the judge was asked again about a recorded answer")

    generate_stream = generate


def bots() -> dict[str, ScriptedProvider]:
    return {"react": ScriptedProvider([RIGHT]), "cot": ScriptedProvider([WRONG])}


def test_a_replayed_comparison_reuses_the_judges_recorded_verdicts(shell):
    shell.user_ns.update(bots=bots(), judge=Priced([judge_reply], repeat=True))
    first = compare(shell, JUDGED)
    assert len(shell.user_ns["judge"].calls) == 2 and first.total_cost_usd > 0
    magics = shell.magics_manager.registry["AgentMagics"]
    assert len(magics.manager.event_log.records("judge_verdict")) == 2

    shell.user_ns["judge"] = JudgeMustNotCall([])  # replay: 0 judge calls
    again = compare(shell, JUDGED)
    assert {t.replay for runs in again.results.values() for t in runs} == {"replayed"}
    by = {r["strategy"]: r for r in again.rows}
    assert by["react"]["passed"] is True and by["cot"]["passed"] is False
    assert by["cot"]["reason"] == "judge (model opinion): says 41, not 42 (recorded verdict, not asked again)"
    assert all(v.recorded and v.opinion for r in ("react", "cot") for v in again.verdicts(r)[0])
    assert again.total_cost_usd == 0 and by["react"]["judge_cost_usd"] == 0

    del shell.user_ns["judge"]  # no judge here at all (offline, no key): the recorded verdicts still stand
    offline = compare(shell, JUDGED)
    assert [r["passed"] for r in offline.rows] == [True, False]
    assert all(v.recorded for r in ("react", "cot") for v in offline.verdicts(r)[0])

    shell.user_ns["judge"] = Priced([judge_reply], repeat=True)  # an edited rubric is a new question
    edited = compare(shell, JUDGED.replace("the product is right", "the product is 42"))
    assert len(shell.user_ns["judge"].calls) == 2 and not any(v.recorded for v in edited.verdicts("react")[0])
    shell.user_ns.update(bots=bots(), judge=Priced([judge_reply], repeat=True))
    compare(shell, JUDGED + " --rerun")  # --rerun asks again
    assert len(shell.user_ns["judge"].calls) == 2


def test_the_verdicts_are_saved_with_the_cell_and_found_by_a_fresh_kernel(shell, tmp_path):
    import nbformat

    from jupyter_brain.notebook.compare_judge import keep_verdicts

    shell.user_ns.update(bots=bots(), judge=Priced([judge_reply], repeat=True))
    compare(shell, JUDGED)
    magics = shell.magics_manager.registry["AgentMagics"]
    log = magics.manager.event_log
    from jupyter_brain.evals.judge_memory import RecordedVerdicts
    from jupyter_brain.notebook.compare_judge import logged_verdicts

    saved = keep_verdicts(RecordedVerdicts(known=logged_verdicts(log), used=logged_verdicts(log)), log, {})
    assert len(saved["jupyter_brain"]["judged"]) == 2
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%compare ...")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": "view"}, metadata=saved)]
    nb.cells.append(cell)
    nbformat.write(nb, tmp_path / "saved.ipynb")
    with log._db_lock:  # a fresh kernel: the log does not have them …
        log._db.execute("DELETE FROM records WHERE kind = 'judge_verdict'")
    shell.run_line_magic("config", f"AgentMagics.notebook = {str(tmp_path / 'saved.ipynb')!r}")
    shell.user_ns["judge"] = JudgeMustNotCall([])  # … the notebook does
    again = compare(shell, JUDGED)
    assert all(v.recorded for r in ("react", "cot") for v in again.verdicts(r)[0])


def test_the_judges_cost_is_in_agent_cost(shell, capsys):
    from tests.priced_providers import SONNET_IN, SONNET_OUT

    shell.user_ns.update(bots=bots(), judge=Priced([judge_reply], repeat=True))
    first = compare(shell, JUDGED)
    capsys.readouterr()
    shell.run_line_magic("agent", "cost")
    out = capsys.readouterr().out
    one_call = 200 * SONNET_IN + 20 * SONNET_OUT
    assert (f"compare {first.comparison_id}: 2 runs $0.0000; judge 2 calls, 440 tokens ${2 * one_call:.4f}  "
            f"(total ${2 * one_call:.4f})") in out
    assert f"total: ${2 * one_call:.4f}" in out  # charged to the session that ran the cell

    shell.user_ns["judge"] = JudgeMustNotCall([])
    again = compare(shell, JUDGED)  # replayed: recorded verdicts cost nothing
    capsys.readouterr()
    shell.run_line_magic("agent", "cost")
    out = capsys.readouterr().out
    assert f"compare {again.comparison_id}: 2 runs $0.0000  (total $0.0000)" in out
    assert f"total: ${2 * one_call:.4f}" in out
