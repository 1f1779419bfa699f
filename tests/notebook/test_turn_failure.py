"""A turn that did not get its answer fails its cell (``AgentMagics.fail_on``), in one line,
after its view; ``%%compare`` fails only when every run did."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from jupyter_brain.notebook.turn_failure import AgentTurnFailed, comparison_failure, fail_statuses
from jupyter_brain.providers.scripted import ScriptedProvider

LOOPING = {"tool_calls": [{"name": "list_variables", "arguments": {}}]}  # never answers


def _magics(shell):
    return shell.magics_manager.registry["AgentMagics"]


def test_the_default_fails_on_error_timeout_budget_the_step_limit_and_an_interrupt(shell) -> None:
    """An interrupted turn fails its cell, as Ctrl-C fails any cell: the rest of a Run All
    is not run (tests/notebook/test_kernel_display.py shows it in a real kernel)."""
    assert fail_statuses(_magics(shell).fail_on) == {"error", "timeout", "budget", "max_steps", "interrupted"}


def test_a_step_limit_fails_the_cell_after_the_view_and_sets_agent(shell, capsys) -> None:
    shell.user_ns["bot"] = ScriptedProvider([LOOPING], repeat=True)
    with pytest.raises(AgentTurnFailed) as info:
        shell.run_cell_magic("agent", "--provider bot --max-steps 2", "loop")
    assert info.value.status == "max_steps"
    assert str(info.value) == ("%%agent: the turn stopped (max_steps): reached the step limit (2 steps) before "
                               "an answer [AgentMagics.fail_on fails the cell on it]")
    assert shell.user_ns["_agent"].status == "max_steps"
    assert "step limit" in capsys.readouterr().out  # the turn's text view was shown first


def test_a_provider_error_fails_the_cell_with_its_message(shell) -> None:
    shell.user_ns["bot"] = ScriptedProvider([{"error": {"message": "no route to host", "kind": "bad_request"}}])
    with pytest.raises(AgentTurnFailed, match=r"\(error\): scripted bad_request error: no route to host"):
        shell.run_cell_magic("agent", "--provider bot --out answer", "hello")
    assert shell.user_ns["answer"].status == "error"  # --out is set too


def test_run_cell_shows_one_line_and_no_traceback(shell, capsys) -> None:
    shell.user_ns["bot"] = ScriptedProvider([{"error": {"message": "boom", "kind": "bad_request"}}])
    result = shell.run_cell("%%agent --provider bot\nhello")
    assert isinstance(result.error_in_exec, AgentTurnFailed)
    assert result.error_in_exec._render_traceback_() == [
        "\x1b[0;31mAgentTurnFailed\x1b[0m: %%agent: the turn stopped (error): scripted bad_request error: boom "
        "[AgentMagics.fail_on fails the cell on it]"]
    printed = capsys.readouterr()
    assert "Traceback" not in printed.out + printed.err


@pytest.mark.parametrize(("fail_on", "fails"), [("error,timeout", False), ("none", False), ("", False),
                                                  ("max_steps", True), ("Max-Steps, error", True)])
def test_the_setting_chooses_which_statuses_fail(shell, fail_on, fails) -> None:
    _magics(shell).fail_on = fail_on
    shell.user_ns["bot"] = ScriptedProvider([LOOPING], repeat=True)
    result = shell.run_cell("%%agent --provider bot --max-steps 1\nloop")
    assert isinstance(result.error_in_exec, AgentTurnFailed) is fails
    assert shell.user_ns["_agent"].status == "max_steps"


def test_a_completed_turn_never_fails(shell) -> None:
    _magics(shell).fail_on = ",".join(("error", "timeout", "budget", "max_steps", "strategy_limit",
                                       "interrupted", "refused"))
    shell.user_ns["bot"] = ScriptedProvider(["fine"])
    assert shell.run_cell("%%agent --provider bot\nhello").success


def test_a_bad_setting_is_a_usage_error_before_the_model_is_called(shell) -> None:
    def must_not_be_called(messages, tools):
        pytest.fail("the provider was called although the setting was wrong")

    _magics(shell).fail_on = "error,oops"
    shell.user_ns["bot"] = ScriptedProvider([must_not_be_called])
    with pytest.raises(UsageError, match=r"AgentMagics.fail_on: unknown status 'oops'; choose from error, "):
        shell.run_cell_magic("agent", "--provider bot", "hello")


def test_compare_fails_only_when_every_run_failed(shell) -> None:
    assert comparison_failure([{"status": "completed"}, {"status": "error", "error": "x"}], {"error"}) is None
    assert comparison_failure([], {"error"}) is None
    failure = comparison_failure([{"status": "error", "error": "no\nkey"}, {"status": "max_steps"}],
                                 {"error", "max_steps"})
    assert failure is not None
    assert str(failure) == ("%%compare: every run stopped (error, max_steps): no key "
                            "[AgentMagics.fail_on fails the cell on it]")


def test_a_compare_cell_whose_runs_all_fail_fails(shell) -> None:
    shell.user_ns["bad"] = ScriptedProvider([{"error": {"message": "down", "kind": "bad_request"}}])
    result = shell.run_cell("%%compare --strategies react,cot --provider bad\n6*7?")
    assert isinstance(result.error_in_exec, AgentTurnFailed)
    assert {r["status"] for r in shell.user_ns["_compare"].rows} == {"error"}
    shell.user_ns["good"] = ScriptedProvider(["Final Answer: 42"])
    assert shell.run_cell("%%compare --strategies react,cot --provider good\n6*7?").success


def test_a_failed_agent_or_compare_cell_is_not_a_cell_for_agent_fix(shell) -> None:
    shell.user_ns["bad"] = ScriptedProvider([{"error": {"message": "down", "kind": "bad_request"}}])
    assert not shell.run_cell("%%agent --provider bad\nhello").success
    assert not shell.run_cell("%%compare --strategies react,cot --provider bad\n6*7?").success
    assert _magics(shell).cell_errors.latest() is None
