"""StrategyPreset and resolve_strategy: the built-in strategies by name."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.strategies import (
    ChainOfThoughtStrategy,
    ReActStrategy,
    ReflexionStrategy,
    StrategyParser,
    StrategyPreset,
    TreeOfThoughtsStrategy,
    resolve_strategy,
)


def test_preset_all_and_create():
    assert StrategyPreset.all() == [
        StrategyPreset.REACT,
        StrategyPreset.REFLEXION,
        StrategyPreset.CHAIN_OF_THOUGHT,
        StrategyPreset.TREE_OF_THOUGHTS,
    ]
    assert isinstance(StrategyPreset.REACT.create(), ReActStrategy)
    assert isinstance(StrategyPreset.REFLEXION.create(), ReflexionStrategy)
    assert isinstance(StrategyPreset.CHAIN_OF_THOUGHT.create(), ChainOfThoughtStrategy)
    assert isinstance(StrategyPreset.TREE_OF_THOUGHTS.create(), TreeOfThoughtsStrategy)
    a, b = StrategyPreset.REACT.create(), StrategyPreset.REACT.create()
    assert a is not b  # fresh instances


def test_preset_display():
    assert [str(p) for p in StrategyPreset.all()] == ["ReAct", "Reflexion", "Chain-of-Thought", "Tree-of-Thoughts"]


@pytest.mark.parametrize(
    ("name", "preset"),
    [
        ("react", StrategyPreset.REACT),
        ("ReAct", StrategyPreset.REACT),
        (" REFLEXION ", StrategyPreset.REFLEXION),
        ("cot", StrategyPreset.CHAIN_OF_THOUGHT),
        ("chain-of-thought", StrategyPreset.CHAIN_OF_THOUGHT),
        ("Chain of Thought", StrategyPreset.CHAIN_OF_THOUGHT),
        ("chain_of_thought", StrategyPreset.CHAIN_OF_THOUGHT),
        ("CHAIN_OF_THOUGHT", StrategyPreset.CHAIN_OF_THOUGHT),
        ("tot", StrategyPreset.TREE_OF_THOUGHTS),
        ("Tree-of-Thoughts", StrategyPreset.TREE_OF_THOUGHTS),
        ("tree of thought", StrategyPreset.TREE_OF_THOUGHTS),
        ("TREE_OF_THOUGHTS", StrategyPreset.TREE_OF_THOUGHTS),
    ],
)
def test_from_name(name, preset):
    assert StrategyPreset.from_name(name) is preset


@pytest.mark.parametrize("bad", ["", "reactx", "tree", "self-consistency"])
def test_from_name_unknown_lists_choices(bad):
    with pytest.raises(ValueError) as err:
        StrategyPreset.from_name(bad)
    msg = str(err.value)
    assert repr(bad) in msg
    for choice in ("react", "reflexion", "cot", "tot"):
        assert choice in msg


def test_resolve_strategy():
    assert resolve_strategy(None) is None
    for off in ("", "none", "None", " off "):
        assert resolve_strategy(off) is None
    s = ReflexionStrategy(3, 1)
    assert resolve_strategy(s) is s
    assert isinstance(resolve_strategy(StrategyPreset.TREE_OF_THOUGHTS), TreeOfThoughtsStrategy)
    assert isinstance(resolve_strategy("Chain-of-Thought"), ChainOfThoughtStrategy)
    with pytest.raises(ValueError):
        resolve_strategy("bogus")


def test_strategy_parser_factory():
    for preset in StrategyPreset.all():
        strategy = preset.create()
        assert strategy.parser().strategy == strategy.key
    with pytest.raises(ValueError):
        StrategyParser("nope")


