"""The built-in strategies by name: ``StrategyPreset`` and ``resolve_strategy``.

The names come from ``names.py``; this module pairs each with its class.
"""

from __future__ import annotations

from enum import Enum

from . import names as _names
from .base import ReasoningStrategy
from .chain_of_thought import ChainOfThoughtStrategy
from .react import ReActStrategy
from .reflexion import ReflexionStrategy
from .tree_of_thoughts import TreeOfThoughtsStrategy

#: Strategy key → class, in the order of ``names.STRATEGY_NAMES``.
STRATEGY_CLASSES: dict[str, type[ReasoningStrategy]] = {
    cls.key: cls for cls in (ReActStrategy, ReflexionStrategy, ChainOfThoughtStrategy, TreeOfThoughtsStrategy)
}


class StrategyPreset(Enum):
    REACT = _names.REACT
    REFLEXION = _names.REFLEXION
    CHAIN_OF_THOUGHT = _names.CHAIN_OF_THOUGHT
    TREE_OF_THOUGHTS = _names.TREE_OF_THOUGHTS

    def create(self) -> ReasoningStrategy:
        return STRATEGY_CLASSES[self.value]()

    @classmethod
    def all(cls) -> list[StrategyPreset]:
        return list(cls)

    @classmethod
    def from_name(cls, name: str) -> StrategyPreset:
        """Accepts keys and names: react, reflexion, cot, chain-of-thought, tot, ..."""
        return cls(_names.canonical_strategy(name))

    def __str__(self) -> str:
        return STRATEGY_CLASSES[self.value].name


def resolve_strategy(value: ReasoningStrategy | StrategyPreset | str | None) -> ReasoningStrategy | None:
    """None/"none"/"" → no strategy; a preset or its name → a fresh default instance."""
    if value is None or isinstance(value, ReasoningStrategy):
        return value
    if isinstance(value, StrategyPreset):
        return value.create()
    if str(value).strip().lower() in _names.OFF_VALUES:
        return None
    return StrategyPreset.from_name(value).create()
