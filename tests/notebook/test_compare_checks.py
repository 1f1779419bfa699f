"""%%compare judges its runs (#27): --expect, --check, --judge, rates with Wilson intervals,
each run in its own copy of the user's namespace, checks re-evaluated on replay."""

from __future__ import annotations

import re
import threading
from typing import Any

import pandas as pd
import pytest
from IPython.core.error import UsageError

from jupyter_brain.providers.scripted import ScriptedProvider
from tests.priced_providers import SONNET_IN, SONNET_OUT, Priced

from ..kernel_notebooks import drop_keys, execute, load_extension

RIGHT, WRONG = "Step 1: 6*7=42\nFinal Answer: 42", "Step 1: 6*7=41\nFinal Answer: 41"


def compare(shell, line: str, cell: str = "What is 6*7?") -> Any:
    shell.run_cell_magic("compare", line, cell)
    return shell.user_ns["_compare"]


def test_a_strategy_that_gives_the_wrong_number_fails_its_check(shell, capsys):
    shell.user_ns["bots"] = {"react": ScriptedProvider([RIGHT]), "cot": ScriptedProvider([WRONG])}
    result = compare(shell, "--strategies react,cot --provider bots --expect 42")
    by = {r["strategy"]: r for r in result.rows}
    assert by["react"]["passed"] is True and by["react"]["reason"] == ""
    assert by["cot"]["passed"] is False
    # the answer is its Final Answer only (#40): "Step 1: 6*7=41" is not in it
    assert by["cot"]["reason"] == "expect: expected '42' (±0.5); the answer's numbers: 41"
    assert result.checks == ["expect '42'"]
    assert [v.passed for v in result.verdicts("cot")[0]] == [False]
    out = capsys.readouterr().out
    assert "cot #1: completed in 1 steps — FAIL: expect: expected '42'" in out  # the terminal says why
    shell.run_line_magic("agent", "compare-history")
    assert "runs: react#1 completed pass, cot#1 completed FAIL" in capsys.readouterr().out


def test_runs_5_gives_the_rate_and_its_wilson_interval(shell, capsys):
    lock, answered = threading.Lock(), []

    def three_of_five_right(messages, tools):
        with lock:
            answered.append(1)
            return RIGHT if len(answered) <= 3 else WRONG

    shell.user_ns["bot"] = ScriptedProvider([three_of_five_right])
    result = compare(shell, "--strategies cot --provider bot --runs 5 --expect 42")
    rate = result.rates()["cot"]
    assert (rate["passed"], rate["checked"], rate["rate"]) == (3, 5, 0.6)
    # By hand: p = 0.6, z = 1.96: (p + z²/2n ∓ z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n) = 0.2307 … 0.8824
    assert (rate["low"], rate["high"]) == pytest.approx((0.2307, 0.8824), abs=1e-4)
    (entry,) = result.summary()
    assert entry["passed"] == 3 and len(entry["reasons"]) == 2
    out = capsys.readouterr().out
    assert "3/5 · 60 % (23–88 %)" in out


def test_each_strategy_starts_from_the_same_state(shell, capsys):
    shell.run_cell("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2, 3]})\nkept = {'n': 1}")
    before = shell.user_ns["df"].copy()
    writes = "x = 1\ndf.loc[0, 'a'] = 99\nkept['n'] = 2"
    shell.user_ns["bots"] = {
        "react": ScriptedProvider([{"text": "Action: run_python",
                                    "tool_calls": [{"name": "run_python", "arguments": {"code": writes}}]},
                                   "Final Answer: done"]),
        "cot": ScriptedProvider(["Final Answer: nothing done"]),
    }
    result = compare(shell, "--strategies react,cot --provider bots --permission auto "
                            "--check \"'x' not in dir()\" --check \"df.loc[0, 'a'] == 1\"")
    react_ns, cot_ns = result.namespace("react"), result.namespace("cot")
    assert react_ns["x"] == 1 and react_ns["df"].loc[0, "a"] == 99 and react_ns["kept"] == {"n": 2}
    assert "x" not in cot_ns and cot_ns["df"].loc[0, "a"] == 1 and cot_ns["kept"] == {"n": 1}
    assert "x" not in shell.user_ns and shell.user_ns["kept"] == {"n": 1}
    pd.testing.assert_frame_equal(shell.user_ns["df"], before)
    by = {r["strategy"]: r for r in result.rows}
    assert by["cot"]["passed"] is True  # its checks read its own namespace …
    assert by["react"]["passed"] is False  # … and react's read the one it changed
    assert result.namespace_changes == []  # DSEval's "namespace intact"
    assert "namespace not intact" not in capsys.readouterr().out


def test_a_run_that_mutates_a_shared_object_is_reported(shell, capsys):
    shell.run_cell(
        "import threading\n"
        "class Holder:\n"
        "    def __init__(self): self.lock, self.n = threading.Lock(), 1\n"
        "    def __deepcopy__(self, memo): raise TypeError('no copies')\n"
        "    def __copy__(self): return self\n"
        "holder = Holder()")
    code = {"name": "run_python", "arguments": {"code": "holder.n = 2"}}
    shell.user_ns["bot"] = ScriptedProvider([{"text": "Action: run_python", "tool_calls": [code]}, "Final Answer: 2"])
    result = compare(shell, "--strategies react --provider bot --permission auto")
    assert shell.user_ns["holder"].n == 2  # shared: it could not be copied
    assert result.namespace_changes == ["holder (changed)"]
    assert "note: your variables changed during the comparison (namespace not intact): holder (changed)" in capsys.readouterr().out


def test_a_check_that_raises_fails_with_one_line(shell, capsys):
    shell.user_ns["bot"] = ScriptedProvider([RIGHT])
    result = compare(shell, "--strategies cot --provider bot --check \"undefined_name > 1\" --check \"1/0\"")
    (row,) = result.rows
    assert row["passed"] is False
    assert row["reason"] == ("check: NameError: name 'undefined_name' is not defined; "
                             "check: ZeroDivisionError: division by zero")
    out = capsys.readouterr().out
    assert "Traceback" not in out and "FAIL: check: NameError" in out


def test_a_check_that_does_not_parse_is_a_usage_error_before_any_run(shell):
    shell.user_ns["bot"] = ScriptedProvider([RIGHT])
    with pytest.raises(UsageError, match=r"--check 'x ==' is not a Python expression"):
        compare(shell, "--strategies cot --provider bot --check 'x =='")
    assert bot_calls(shell) == 0
    with pytest.raises(UsageError, match="--judge-provider needs --judge"):
        compare(shell, "--strategies cot --provider bot --judge-provider bot")


def bot_calls(shell) -> int:
    return len(shell.user_ns["bot"].calls)


def judge_reply(messages, tools):
    right = re.search(r"\b42\b", messages[-1]["content"].split("6*7", 1)[-1]) is not None
    return {"text": "PASS\nsays 42" if right else "FAIL\nsays 41, not 42",
            "usage": {"input_tokens": 200, "output_tokens": 20}}


def test_the_judge_is_labelled_and_billed(shell, capsys):
    shell.user_ns.update(bots={"react": ScriptedProvider([RIGHT]), "cot": ScriptedProvider([WRONG])},
                         judge=Priced([judge_reply], repeat=True))
    result = compare(shell, "--strategies react,cot --provider bots --judge 'the product is right' "
                            "--judge-provider judge")
    by = {r["strategy"]: r for r in result.rows}
    one_call = 200 * SONNET_IN + 20 * SONNET_OUT
    assert by["react"]["passed"] is True and by["cot"]["passed"] is False
    assert by["cot"]["reason"] == "judge (model opinion): says 41, not 42"
    assert by["react"]["judge_tokens"] == 220 and by["react"]["judge_cost_usd"] == pytest.approx(one_call)
    assert result.total_cost_usd == pytest.approx(2 * one_call)  # the runs are free, the judge is not
    (verdict,) = result.verdicts("react")[0]
    assert verdict.opinion and verdict.label == "judge: the product is right"


def test_a_mapped_provider_needs_a_judge_provider(shell):
    shell.user_ns["bots"] = {"react": ScriptedProvider([RIGHT])}
    with pytest.raises(UsageError, match="name the judge's with --judge-provider"):
        compare(shell, "--strategies react --provider bots --judge")


def test_the_judge_stays_under_the_comparisons_cap(shell):
    shell.user_ns.update(bot=ScriptedProvider([RIGHT]), judge=Priced([judge_reply]))
    result = compare(shell, "--strategies cot --provider bot --judge --judge-provider judge --max-cost 0.001")
    (row,) = result.rows
    assert row["passed"] is False and "not judged: the call (up to $" in row["reason"]
    assert shell.user_ns["judge"].calls == [] and result.stopped_by_budget
    from jupyter_brain.widgets.compare_notes import header_notes
    assert header_notes(result) == ["stopped early: the $0.001 cap (--max-cost) was reached; 1 answer(s) not judged"]


def test_checks_are_evaluated_again_on_replay(shell):
    shell.user_ns["bots"] = {"react": ScriptedProvider([RIGHT]), "cot": ScriptedProvider([WRONG])}
    first = compare(shell, "--strategies react,cot --provider bots --expect 42")
    assert [r["passed"] for r in first.rows] == [True, False]

    class MustNotCall(ScriptedProvider):
        def generate_stream(self, *args: Any, **kwargs: Any) -> Any:
            pytest.fail("a recorded run called its model")

    shell.user_ns["bots"] = {"react": MustNotCall([]), "cot": MustNotCall([])}
    # Another check on the same cell: the answers replay, the new check judges them.
    again = compare(shell, "--strategies react,cot --provider bots --expect 41")
    assert {t.replay for runs in again.results.values() for t in runs} == {"replayed"}
    assert [r["passed"] for r in again.rows] == [False, True]


def test_the_header_says_when_the_budget_stopped_the_comparison_early():
    import io

    from jupyter_brain.agent.events import EventLog
    from jupyter_brain.compare import run_comparison
    from jupyter_brain.evals import ExpectCheck
    from jupyter_brain.session import AgentOptions
    from jupyter_brain.widgets.compare_text import CompareTextView
    from tests.priced_providers import MustNotCall

    out = io.StringIO()
    view = CompareTextView(out, ["react", "cot"])
    with EventLog(":memory:") as log:
        result = run_comparison("q", ["react", "cot"], lambda s, r: MustNotCall(), lambda: [],
                                AgentOptions(max_cost_per_turn=0.0001), event_log=log,
                                on_run_end=view.run_finished, checks=[ExpectCheck("42")])
    view.finish(result)
    assert result.stopped_by_budget and [r["status"] for r in result.rows] == ["budget", "budget"]
    assert all(r["reason"].startswith("run: the run did not complete (budget)") for r in result.rows)
    text = out.getvalue()
    assert "note: stopped early: the $0.0001 cap (--max-cost) was reached; 2 run(s) stopped before the end" in text
    assert "0/1 · 0 %" not in text and "fail" in text


@pytest.mark.kernel
def test_in_a_real_kernel_runs_are_isolated_and_rated(tmp_path, monkeypatch):
    """nbclient drives a real kernel: the widget's Markdown fallback carries the verdicts,
    the rates are data in ``_compare``, and the kernel's own variables are untouched."""
    import nbformat

    drop_keys(monkeypatch)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            load_extension(tmp_path / 'jb') +
            "import threading, pandas as pd\n"
            "from jupyter_brain import ScriptedProvider\n"
            "df = pd.DataFrame({'a': [1, 2, 3]})\n"
            "_lock, _said, _finals = threading.Lock(), [], []  # the bot's counters: _-names, not the user's\n"
            "def answer(messages, tools):\n"
            "    if any(m.get('role') == 'tool' for m in messages):  # the run's second call: its answer\n"
            "        with _lock:\n"
            "            _finals.append(1)\n"
            "            return 'Final Answer: 42' if len(_finals) <= 3 else 'Final Answer: 41'\n"
            "    with _lock:\n"
            "        _said.append(1)\n"
            "        n = len(_said)\n"
            "    code = f\"x = {n}\\ndf.loc[0, 'a'] = {n * 100}\"\n"
            "    return {'text': 'Action: run_python', 'tool_calls': [{'name': 'run_python', 'arguments': {'code': code}}]}\n"
            "bot = ScriptedProvider([answer], repeat=True)"),
        nbformat.v4.new_code_cell(
            "%%compare --strategies cot --runs 4 --provider bot --permission auto --expect 42 "
            "--check \"df.loc[0, 'a'] == x * 100\"\nWhat is 6*7?"),
        nbformat.v4.new_code_cell(
            "r = _compare.rates()['cot']\n"
            "print(r['passed'], r['checked'], round(r['low'], 4), round(r['high'], 4))\n"
            "print('x' in dir(), df['a'].tolist(), _compare.namespace_changes)"),
    ]
    execute(nb, tmp_path, timeout=180)
    rate_line, namespace_line = nb.cells[2].outputs[0].text.strip().splitlines()
    # Three of the four runs answer 42: 3/4, by hand (p = .75, z = 1.96) 0.3006 … 0.9544.
    assert rate_line == "3 4 0.3006 0.9544"
    assert namespace_line == "False [1, 2, 3] []"
    (display,) = [o for o in nb.cells[1].outputs if o.output_type == "display_data"]
    markdown = display.data["text/markdown"]
    assert "| strategy | success (95 % CI) | tokens | cost" in markdown
    assert "| cot | 3/4 · 75 % (30–95 %) |" in markdown


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("--strategies react,cot --runs 2", "--strategies react,cot --runs 2"),  # untouched: old recordings still match
        ("--strategies react --expect 42 --check \"len(x) == 2\"", "--strategies react"),
        ("--judge --runs 2", "--runs 2"),
        ("--runs 2 --judge 'names the month' --judge-provider j", "--runs 2"),
        ("--expect=42 --runs 2", "--runs 2"),
    ],
)
def test_checks_are_not_part_of_the_recording_key(line, kept):
    from jupyter_brain.notebook.compare_checks import without_checks

    assert without_checks(line) == kept


def test_a_judge_without_a_model_here_does_not_stop_the_runs(shell):
    shell.user_ns["bot"] = ScriptedProvider([RIGHT])
    result = compare(shell, "--strategies cot --provider bot --expect 42 --judge --judge-provider missing_judge")
    (row,) = result.rows
    assert row["status"] == "completed" and row["passed"] is False
    assert row["reason"].startswith("judge (model opinion): not judged: unknown provider 'missing_judge'")
