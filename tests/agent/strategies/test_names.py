"""names.py is the one list of strategy names: the presets, classes and choices agree with it,
and reading it stays cheap (the notebook extension does at ``%load_ext``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import jupyter_brain.agent.strategies as strategies
from jupyter_brain.agent.strategies import (
    STRATEGY_CLASSES,
    StrategyPreset,
    names,
    parse_strategy_text,
    resolve_strategy,
)
from jupyter_brain.agent.strategies.names import (
    NO_STRATEGY,
    OFF_VALUES,
    STRATEGY_ALIASES,
    STRATEGY_CHOICES,
    STRATEGY_NAMES,
    canonical_strategy,
)


def test_presets_and_classes_follow_names():
    assert tuple(p.value for p in StrategyPreset.all()) == STRATEGY_NAMES
    assert tuple(STRATEGY_CLASSES) == STRATEGY_NAMES
    for preset in StrategyPreset.all():
        assert type(preset.create()) is STRATEGY_CLASSES[preset.value]
        assert preset.create().key == preset.value
    assert STRATEGY_CHOICES == (*STRATEGY_NAMES, NO_STRATEGY)


@pytest.mark.parametrize("key", STRATEGY_NAMES)
def test_every_name_has_a_parser(key):
    assert parse_strategy_text("Final Answer: x", key)[-1].text == "x"


def test_every_spelling_resolves_to_its_key():
    for key in STRATEGY_NAMES:
        assert canonical_strategy(key) == key
        assert canonical_strategy(key.upper()) == key
    for alias, key in STRATEGY_ALIASES.items():
        assert key in STRATEGY_NAMES
        assert canonical_strategy(alias) == key
        assert StrategyPreset.from_name(alias).value == key
    for preset in StrategyPreset.all():  # the display names: "Chain-of-Thought", ...
        assert StrategyPreset.from_name(str(preset)) is preset
        assert StrategyPreset.from_name(preset.name) is preset  # "CHAIN_OF_THOUGHT"


def test_none_is_a_choice_but_no_strategy():
    with pytest.raises(ValueError, match="choose one of: react, reflexion, cot, tot, none"):
        canonical_strategy(NO_STRATEGY)
    assert NO_STRATEGY in OFF_VALUES
    for off in OFF_VALUES:
        assert resolve_strategy(off) is None


def test_every_exported_name_resolves():
    assert set(strategies.__all__) == {*strategies._LAZY, *names.__all__}
    for name in strategies.__all__:
        assert getattr(strategies, name) is not None, name
    assert set(strategies.__all__) <= set(dir(strategies))
    with pytest.raises(AttributeError):
        strategies.NoSuchThing  # noqa: B018


def test_names_import_without_pydantic():
    probe = (
        "import sys\n"
        "from jupyter_brain.agent.strategies.names import STRATEGY_CHOICES\n"
        "from jupyter_brain.agent.strategies import STRATEGY_NAMES\n"
        "assert STRATEGY_CHOICES[-1] == 'none' and STRATEGY_NAMES\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'"
        " or m.startswith('jupyter_brain.agent.strategies.') and not m.endswith('.names'))\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
