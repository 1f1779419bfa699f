"""One source for settings: the flags, the traitlets, ``%agent config``, ``AgentOptions``
and the docs' generated reference all agree with ``jupyter_brain.settings.SETTINGS``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jupyter_brain.agent.strategies.names import STRATEGY_CHOICES, STRATEGY_NAMES
from jupyter_brain.magics import AgentMagics
from jupyter_brain.notebook import reference
from jupyter_brain.notebook.parsers import agent_parser, compare_parser
from jupyter_brain.settings import COMPACTION_ALIASES, COMPACTION_CHOICES, CONFIG_KEYS, SETTINGS
from jupyter_brain.settings_model import AgentOptions

CELL_ONLY = {"--session", "--new", "--append", "--out", "-h", "--help", "--strategies", "--runs", "--rerun",
             "--expect", "--check", "--judge", "--judge-provider",  # %%compare's checks (#27)
             "--check-timeout", "--no-copy",
             "--resource", "--mcp-prompt", "--arg"}  # MCP resources and prompts (#26)


def _options(parser) -> dict[str, object]:
    """Each option string of a parser -> its argparse action."""
    return {flag: action for action in parser._actions for flag in action.option_strings}


def test_every_flag_of_a_setting_is_built_from_it() -> None:
    options = _options(agent_parser())
    flagged = {s.flag for s in SETTINGS.values() if s.flag} | {s.off_flag for s in SETTINGS.values() if s.off_flag}
    assert set(options) - CELL_ONLY == flagged
    for s in SETTINGS.values():
        if s.flag is None:
            continue
        action = options[s.flag]
        assert action.dest == s.name and action.help == s.help
        assert tuple(action.choices or ()) == s.allowed()
        assert action.metavar == s.metavar


def test_compare_flags_are_settings_or_its_own() -> None:
    options = _options(compare_parser())
    for flag, action in options.items():
        if flag not in CELL_ONLY:
            setting = SETTINGS[action.dest]
            assert flag == setting.flag
            assert set(action.choices or ()) <= set(setting.allowed())
    assert options["--strategies"].default == list(STRATEGY_NAMES)


def test_traits_are_the_settings() -> None:
    traits = AgentMagics.class_traits(config=True)
    assert set(traits) == set(SETTINGS)
    for name, s in SETTINGS.items():
        trait = traits[name]
        assert trait.default() == s.default, name  # default(): a Dict trait makes its default per instance
        assert trait.help == s.help
        if s.allowed():
            assert tuple(trait.values) == s.allowed()
    assert AgentMagics._CONFIG_KEYS == CONFIG_KEYS


def test_agent_options_are_the_config_keys() -> None:
    assert tuple(AgentOptions.model_fields) == CONFIG_KEYS
    defaults = AgentOptions()
    for key in CONFIG_KEYS:
        s = SETTINGS[key]
        assert getattr(defaults, key) == (None if s.zero_is_none else s.default), key


def test_the_old_import_path_of_agent_options() -> None:
    from jupyter_brain.session import AgentOptions as FromSession

    assert FromSession is AgentOptions


@pytest.mark.parametrize(("key", "given", "stored"), [
    ("strategy", "Chain of Thought", "cot"), ("strategy", "off", "none"), ("strategy", "TREE_OF_THOUGHTS", "tot"),
    ("compaction", "sliding-window", "summary"), ("compaction", "BM25", "semantic"),
    ("permission", "Read_Only", "read-only"), ("think", " High ", "high"), ("context_budget", 0, None),
])
def test_other_spellings_are_accepted(key: str, given: object, stored: object) -> None:
    assert getattr(AgentOptions(**{key: given}), key) == stored


def test_strategy_choices_are_the_agents() -> None:
    assert SETTINGS["strategy"].allowed() == STRATEGY_CHOICES
    assert tuple(AgentMagics.class_traits()["strategy"].values) == STRATEGY_CHOICES


def test_compaction_choices_and_aliases_match_the_registry() -> None:
    from jupyter_brain.agent.context import SemanticRelevance, SlidingWindowSummary, TokenBudget, compaction_strategy

    assert {SlidingWindowSummary.name, TokenBudget.name, SemanticRelevance.name} == set(COMPACTION_CHOICES)
    for name in COMPACTION_CHOICES:
        assert compaction_strategy(name).name == name
    for alias, name in COMPACTION_ALIASES.items():
        assert compaction_strategy(alias).name == name


# ------------------------------------------------------------- the docs' reference pages

def test_the_flags_reference_lists_every_flag_with_its_choices() -> None:
    """docs/reference/magics.md is written from the parsers: every flag, and its choices."""
    for parser in (agent_parser(), compare_parser()):
        table = reference.flags_table(parser)
        for action in parser._actions:
            if action.dest == "help":
                continue
            for flag in action.option_strings:
                assert f"`{flag}`" in table, f"{parser.prog}: {flag} missing from the reference"
            if action.choices is not None:
                assert "\\|".join(map(str, action.choices)) in table, (parser.prog, action.dest)
        assert "`--help`" not in table
    assert reference.usage(agent_parser()).startswith("```\n%%agent [")


def test_the_settings_reference_is_the_traits() -> None:
    table = reference.settings_table()
    names = set(re.findall(r"^\| `(\w+)` \|", table, re.M))
    assert names == set(SETTINGS) == set(AgentMagics.class_trait_names(config=True)) - {"hooks"}


def test_the_subcommand_reference_is_agent_help() -> None:
    from jupyter_brain.notebook.subcommands.help_text import SUBCOMMANDS

    table = reference.subcommands_table()
    assert all(f"`{reference._cell(name)}`" in table for name in SUBCOMMANDS)


def test_every_api_directive_names_an_object_that_exists() -> None:
    import importlib

    for line in reference.api_directives().split("\n\n"):
        path = line.removeprefix("::: ")
        module, _, name = path.rpartition(".")
        assert hasattr(importlib.import_module(module), name), path


def test_the_docs_hook_fills_each_marker_and_refuses_an_unknown_one() -> None:
    """The mkdocs hook (docs/hooks/reference.py) as the build calls it."""
    import importlib.util
    from types import SimpleNamespace

    pytest.importorskip("mkdocs")  # the docs extra (installed by scripts/test.sh with the test extra)
    from mkdocs.exceptions import PluginError

    path = Path(__file__).resolve().parents[1] / "docs" / "hooks" / "reference.py"
    spec = importlib.util.spec_from_file_location("docs_reference_hook", path)
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = SimpleNamespace(file=SimpleNamespace(src_uri="reference/x.md"))
    filled = hook.on_page_markdown("a\n<!-- reference: settings -->\nb", page, {}, None)
    assert "| `think` |" in filled and "<!-- reference" not in filled
    with pytest.raises(PluginError, match="nothing generates <!-- reference: nothing here -->"):
        hook.on_page_markdown("<!-- reference: nothing here -->", page, {}, None)


def test_load_ext_reads_the_settings_without_pydantic() -> None:
    import os
    import subprocess
    import sys

    # Without the warm-up, whose thread imports the agent core (pydantic with it) in the
    # background: whether it got that far before the print was a race, which the test lost
    # once imports were fast enough (bytecode written, fresh-clone run BB).
    probe = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance().run_line_magic('load_ext', 'jupyter_brain')\n"
        "print('jupyter_brain.settings' in sys.modules, 'pydantic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env={**os.environ, "JUPYTER_BRAIN_WARM_UP": "0"})
    assert out.stdout.split() == ["True", "False"]


def test_jupyter_brain_replay_in_the_environment_is_every_kernels_default() -> None:
    """#39: ``JUPYTER_BRAIN_REPLAY=off`` makes ``AgentMagics.replay`` "off" (CI's live pass);
    a value that is not a choice is one warning, and the default holds."""
    import os
    import warnings

    setting = SETTINGS["replay"]
    before = os.environ.get("JUPYTER_BRAIN_REPLAY")
    try:
        os.environ["JUPYTER_BRAIN_REPLAY"] = "OFF"
        assert setting.initial() == "off"
        from jupyter_brain.settings import setting_trait

        assert setting_trait("replay").default_value == "off"
        os.environ["JUPYTER_BRAIN_REPLAY"] = "sometimes"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert setting.initial() == "auto"
        assert "JUPYTER_BRAIN_REPLAY='sometimes'" in str(caught[0].message)
        del os.environ["JUPYTER_BRAIN_REPLAY"]
        assert setting.initial() == "auto"
    finally:
        if before is not None:
            os.environ["JUPYTER_BRAIN_REPLAY"] = before
        else:
            os.environ.pop("JUPYTER_BRAIN_REPLAY", None)
