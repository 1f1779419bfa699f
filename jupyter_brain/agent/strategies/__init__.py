"""Named reasoning strategies (ReAct, Reflexion, Chain-of-Thought, Tree-of-Thoughts).

A strategy shapes the system prompt and says when reasoning has converged. The model's
text in the strategy's format is parsed into typed ``StrategyStep``s — incrementally, so
a view can show Thought/Action/Observation chips while the answer is still streaming.

Map: ``names`` (the strategy names, plain Python), ``steps`` (the step models),
``parser`` (the streaming parser), ``base`` (``ReasoningStrategy``), one module per
strategy (its prompt and its labels), ``presets`` (``StrategyPreset``).

Everything but the names is imported lazily: ``names`` is read when the notebook
extension loads, and that must not pull in pydantic.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .names import (
    CHAIN_OF_THOUGHT,
    NO_STRATEGY,
    OFF_VALUES,
    REACT,
    REFLEXION,
    STRATEGY_ALIASES,
    STRATEGY_CHOICES,
    STRATEGY_NAMES,
    TREE_OF_THOUGHTS,
    canonical_strategy,
)

if TYPE_CHECKING:
    from .base import ReasoningStrategy
    from .chain_of_thought import ChainOfThoughtStrategy
    from .parser import FINAL_ANSWER, StrategyParser, final_answer, parse_strategy_text
    from .presets import STRATEGY_CLASSES, StrategyPreset, resolve_strategy
    from .react import ReActStrategy
    from .reflexion import ReflexionStrategy
    from .steps import (
        STEP_ADAPTER,
        Action,
        AnyStep,
        Branch,
        FinalAnswer,
        Observation,
        Reflection,
        StrategyStep,
        Thought,
        step_from_dict,
    )
    from .tree_of_thoughts import TreeOfThoughtsStrategy

_LAZY = {
    "StrategyStep": "steps",
    "Thought": "steps",
    "Action": "steps",
    "Observation": "steps",
    "Reflection": "steps",
    "Branch": "steps",
    "FinalAnswer": "steps",
    "AnyStep": "steps",
    "STEP_ADAPTER": "steps",
    "step_from_dict": "steps",
    "StrategyParser": "parser",
    "parse_strategy_text": "parser",
    "final_answer": "parser",
    "FINAL_ANSWER": "parser",
    "ReasoningStrategy": "base",
    "ReActStrategy": "react",
    "ReflexionStrategy": "reflexion",
    "ChainOfThoughtStrategy": "chain_of_thought",
    "TreeOfThoughtsStrategy": "tree_of_thoughts",
    "StrategyPreset": "presets",
    "STRATEGY_CLASSES": "presets",
    "resolve_strategy": "presets",
}

__all__ = [
    "CHAIN_OF_THOUGHT",
    "NO_STRATEGY",
    "OFF_VALUES",
    "REACT",
    "REFLEXION",
    "STRATEGY_ALIASES",
    "STRATEGY_CHOICES",
    "STRATEGY_NAMES",
    "TREE_OF_THOUGHTS",
    "canonical_strategy",
    "StrategyStep",
    "Thought",
    "Action",
    "Observation",
    "Reflection",
    "Branch",
    "FinalAnswer",
    "AnyStep",
    "STEP_ADAPTER",
    "step_from_dict",
    "StrategyParser",
    "parse_strategy_text",
    "final_answer",
    "FINAL_ANSWER",
    "ReasoningStrategy",
    "ReActStrategy",
    "ReflexionStrategy",
    "ChainOfThoughtStrategy",
    "TreeOfThoughtsStrategy",
    "StrategyPreset",
    "STRATEGY_CLASSES",
    "resolve_strategy",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if module == "parser":  # a key names a built-in strategy's labels: define them first
        import_module(f"{__name__}.presets")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
