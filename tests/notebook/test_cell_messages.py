"""Issue #24's small fixes on the notebook side: help texts with a bare ``%``, one-line
errors for bad flags, and ``--provider scripted`` without a script."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from jupyter_brain.notebook.parsers import agent_parser, compare_parser, subcommand_parser
from jupyter_brain.providers.scripted import ScriptedProvider


def test_the_skill_help_line_shows_its_text_not_argparses_parameters() -> None:
    text = " ".join(agent_parser().format_help().split())
    assert "(%agent skills lists them)" in text
    assert "'option_strings'" not in text and "{'" not in text  # what '%a' made of the parameter dict


def test_a_help_text_may_still_name_its_default() -> None:
    from jupyter_brain.notebook.parsers import UsageParser

    parser = UsageParser(prog="%agent x", add_help=False)
    parser.add_argument("--limit", default=20, help="show at most %(default)s")
    assert "show at most 20" in " ".join(parser.format_help().split())


@pytest.mark.parametrize("parser", [agent_parser(), compare_parser()], ids=["agent", "compare"])
def test_an_unknown_flag_is_one_line_naming_it_and_pointing_at_help(parser) -> None:
    with pytest.raises(UsageError) as info:
        parser.parse_args(["--frobnicate"])
    message = str(info.value)
    assert message == f"{parser.prog}: unrecognized arguments: --frobnicate (see {parser.prog} --help)"


def test_a_misspelt_flag_gets_the_close_name() -> None:
    with pytest.raises(UsageError) as info:
        agent_parser().parse_args(["--thnk", "low"])
    assert str(info.value) == ("%%agent: unrecognized arguments: --thnk low "
                               "(did you mean --think?; see %%agent --help)")


def test_a_bad_choice_stays_one_line_with_the_choices() -> None:
    with pytest.raises(UsageError) as info:
        agent_parser().parse_args(["--think", "maximum"])
    message = str(info.value)
    assert "\n" not in message and "'off', 'low', 'medium', 'high'" in message


def test_a_parser_without_help_shows_its_short_usage_on_the_same_line() -> None:
    with pytest.raises(UsageError) as info:
        subcommand_parser("undo", force=True).parse_args(["--bogus"])
    assert str(info.value) == ("%agent undo: unrecognized arguments: --bogus "
                               "(usage: %agent undo [--session NAME] [--force])")


def test_a_bad_flag_in_a_cell_prints_one_line(shell, capsys) -> None:
    shell.run_cell("%%agent --frobnicate\nhello")
    err = capsys.readouterr().err.strip()
    assert err == "UsageError: %%agent: unrecognized arguments: --frobnicate (see %%agent --help)"


@pytest.mark.parametrize("spelling", ["scripted", "Scripted"])
def test_provider_scripted_alone_says_it_needs_a_script(shell, spelling) -> None:
    with pytest.raises(UsageError) as info:
        shell.run_cell_magic("agent", f"--provider {spelling}", "hello")
    message = str(info.value)
    assert "--provider scripted has no script, so it could never answer" in message
    assert "ScriptedProvider(" in message and "--provider bot" in message


def test_a_variable_naming_scripted_gets_the_same_message(shell) -> None:
    shell.user_ns["bot"] = "scripted"
    with pytest.raises(UsageError, match="has no script"):
        shell.run_cell_magic("agent", "--provider bot", "hello")


def test_a_scripted_provider_with_a_script_still_answers(shell) -> None:
    shell.user_ns["bot"] = ScriptedProvider(["hi"])
    shell.run_cell_magic("agent", "--provider bot", "hello")
    assert shell.user_ns["_agent"].text == "hi"
    assert ScriptedProvider(["x"]).has_script and not ScriptedProvider().has_script


def test_compare_with_provider_scripted_alone_is_refused_before_any_run(shell) -> None:
    with pytest.raises(UsageError, match="%%compare: --provider scripted has no script"):
        shell.run_cell_magic("compare", "--strategies react,cot --provider scripted", "6*7?")
    assert "_compare" not in shell.user_ns
