"""Budget caps in a notebook: ``--max-cost`` / ``--max-tokens-total`` and the
``AgentMagics.max_cost_per_*`` defaults, the session's cap across kernels (the event log),
``%agent cost`` against the caps, and ``%%compare --max-cost`` for all runs together."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import nbformat
import pytest
from IPython.core.error import UsageError
from priced_providers import SONNET_OUT, MustNotCall, Priced

from jupyter_brain.agent.cost_caps import BudgetCaps, session_spending
from jupyter_brain.agent.events import EventLog
from jupyter_brain.notebook.budget import budget_caps
from jupyter_brain.notebook.options import options_for
from jupyter_brain.notebook.parsers import agent_parser, compare_parser, split_flags
from jupyter_brain.notebook.subcommands.past_turns import cmd_cost
from jupyter_brain.session import SessionManager
from jupyter_brain.settings import CONFIG_KEYS, SETTINGS
from jupyter_brain.settings_model import AgentOptions

from ..kernel_notebooks import drop_keys, execute, load_extension


def _answer(usd: float) -> dict:
    return {"text": "answered", "usage": {"input_tokens": 0, "output_tokens": round(usd / SONNET_OUT)}}


def _defaults(**changed: Any) -> dict[str, Any]:
    values = {key: SETTINGS[key].default for key in CONFIG_KEYS}
    return {**values, **changed}


# flags and settings ------------------------------------------------------------------------
def test_the_flags_and_settings_become_the_turns_caps() -> None:
    args = agent_parser().parse_args(split_flags("--max-cost 0.25 --max-tokens-total 20000", "%%agent"))
    options = options_for(_defaults(max_cost_per_session=2.0), args)
    assert budget_caps(options) == BudgetCaps(max_cost=0.25, max_tokens_total=20_000, max_session_cost=2.0)
    plain = options_for(_defaults(), agent_parser().parse_args([]))
    assert budget_caps(plain) is None  # no cap: the budget hook sits the turn out
    kernel_default = options_for(_defaults(max_cost_per_turn=0.1), agent_parser().parse_args([]))
    assert budget_caps(kernel_default) == BudgetCaps(max_cost=0.1)


@pytest.mark.parametrize("line", ["--max-cost -1", "--max-cost nothing", "--max-tokens-total 0"])
def test_a_bad_cap_is_a_one_line_usage_error(line: str) -> None:
    with pytest.raises(UsageError) as err:
        agent_parser().parse_args(split_flags(line, "%%agent"))
    assert str(err.value).startswith("%%agent: argument --max-")


def test_compare_takes_max_cost() -> None:
    args = compare_parser().parse_args(split_flags("--max-cost 0.5", "%%compare"))
    assert options_for(_defaults(), args, "%%compare").max_cost_per_turn == 0.5


# the session's cap, across kernels ----------------------------------------------------------
def test_the_session_cap_counts_earlier_turns_from_the_log_of_a_restarted_manager(tmp_path: Any) -> None:
    first = SessionManager(tmp_path)
    session = first.use("nb")
    harness = session.build_harness(Priced([_answer(0.05)]), [], AgentOptions(permission="read-only"))
    assert session.run("q1", harness).status == "completed"
    first.event_log.close()

    again = SessionManager(tmp_path)  # a new kernel on the same data dir
    assert session_spending(again.event_log, "nb").cost_usd == pytest.approx(0.05, abs=1e-4)
    session = again.use("nb")
    harness = session.build_harness(MustNotCall(), [], AgentOptions(permission="read-only"))
    result = session.run("q2", harness, budget=BudgetCaps(max_session_cost=0.06))  # $0.05 + ~$0.016 > $0.06
    assert result.status == "budget"
    assert "the session's cost cap: $0.0500 spent (earlier turns included) of $0.0600" in result.text
    assert "AgentMagics.max_cost_per_session" in result.text


def test_agent_cost_shows_spent_against_the_caps_after_a_restart(tmp_path: Any, capsys: Any) -> None:
    first = SessionManager(tmp_path)
    session = first.use("nb")
    for usd in (0.02, 0.03):
        harness = session.build_harness(Priced([_answer(usd)]), [], AgentOptions(permission="read-only"))
        session.run("q", harness)
    first.event_log.close()
    again = SessionManager(tmp_path)
    again.use("nb")
    magics = SimpleNamespace(manager=again, max_cost_per_session=0.1, max_cost_per_turn=0.05, max_tokens_per_turn=0)
    cmd_cost(magics, [])
    out = capsys.readouterr().out
    assert "budget: session nb spent $0.0500 of its $0.1000 cap (50%, $0.0500 left) over 2 turns in every kernel" in out
    assert "turn caps: $0.0500 per turn (--max-cost, --max-tokens-total); the last turn: $0.0300," in out


# %%compare: one cap for all runs ---------------------------------------------------------------
def test_compare_max_cost_bounds_all_runs_together() -> None:
    from jupyter_brain.compare import run_comparison

    log = EventLog(":memory:")
    calls = threading.Lock()
    made: list[str] = []

    class Counting(Priced):
        def generate_stream(self, *args: Any, **kwargs: Any) -> Any:
            with calls:
                made.append("call")
            return super().generate_stream(*args, **kwargs)

    result = run_comparison("q", ["react", "cot"], lambda s, r: Counting([_answer(0.015)]), lambda: [],
                            AgentOptions(max_cost_per_turn=0.03), event_log=log)
    statuses = sorted(r["status"] for r in result.rows)
    assert statuses == ["budget", "completed"], result.rows  # one call may cost ~$0.016: two would cross $0.03
    assert len(made) == 1
    assert sum(r["cost_usd"] for r in result.rows) <= 0.03
    (stopped,) = [r for runs in result.results.values() for r in runs if r.status == "budget"]
    assert "the comparison's cost cap (all runs together)" in stopped.text


# a real kernel ---------------------------------------------------------------------------------
@pytest.mark.kernel
def test_max_cost_in_a_real_kernel_stops_before_the_call(tmp_path: Any, monkeypatch: Any) -> None:

    drop_keys(monkeypatch)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            load_extension(tmp_path / 'jb') +
            "from jupyter_brain import ScriptedProvider\n"
            "calls = []\n"
            "class MustNotCall(ScriptedProvider):\n"
            "    name, max_tokens = 'anthropic', 1000\n"
            "    def generate_stream(self, *args, **kwargs):\n"
            "        calls.append('stream')\n"
            "        raise AssertionError('the provider was called')\n"
            "    generate = generate_stream\n"
            "bot = MustNotCall(['never'], model='claude-sonnet-4')"
        ),
        nbformat.v4.new_code_cell("%%agent --provider bot --max-cost 0.001\nWhich month dropped most?"),
        nbformat.v4.new_code_cell("print(_agent.status, len(calls))"),
        nbformat.v4.new_code_cell("%agent cost"),
    ]
    # allow_errors: the stopped turn fails its cell (AgentMagics.fail_on), as Run All should see it
    execute(nb, tmp_path, allow_errors=True)
    assert nb.cells[2].outputs[0].text.strip() == "budget 0"
    (error,) = [o for o in nb.cells[1].outputs if o.output_type == "error"]
    assert error.ename == "AgentTurnFailed" and "(budget)" in error.evalue
    (display,) = [o for o in nb.cells[1].outputs if o.output_type == "display_data"]
    markdown = display.data["text/markdown"]
    assert "stopped: budget cap reached" in markdown and "--max-cost" in markdown
    assert "budget: session default spent $0.0000" in nb.cells[3].outputs[0].text


def test_agent_log_shows_the_budget_warning_and_the_budget_ending() -> None:
    from jupyter_brain.agent.events import BudgetWarning, TurnEnd
    from jupyter_brain.notebook.subcommands.past_turns import event_line

    warning = BudgetWarning(turn_id="abcdef123", step=2, scope="turn", spent=0.085, cap=0.1,
                            message="85% of this turn's cost cap used: $0.0850 of $0.1000")
    assert event_line(warning) == "[abcdef] budget_warning step 2  85% of this turn's cost cap used: $0.0850 of $0.1000"
    end = TurnEnd(turn_id="abcdef123", status="budget", text="[Budget: stopped before the next model call]")
    assert event_line(end).startswith("[abcdef] turn_end  budget: [Budget: stopped")
