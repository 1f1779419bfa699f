"""The strategy names, in one place: the keys, the choices a user may pick, their aliases.

Plain Python on purpose (no pydantic, no strategy classes): the notebook layer builds its
flags and its ``strategy`` setting from ``STRATEGY_CHOICES`` (on first use, so ``%load_ext``
stays fast), and the strategy classes take their keys from here.
"""

from __future__ import annotations

import re

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
]

REACT = "react"
REFLEXION = "reflexion"
CHAIN_OF_THOUGHT = "cot"
TREE_OF_THOUGHTS = "tot"

#: Every strategy key, in the order presets and choices are listed.
STRATEGY_NAMES: tuple[str, ...] = (REACT, REFLEXION, CHAIN_OF_THOUGHT, TREE_OF_THOUGHTS)

#: What ``--strategy`` and ``%config AgentMagics.strategy`` accept ("none": no strategy).
NO_STRATEGY = "none"
STRATEGY_CHOICES: tuple[str, ...] = (*STRATEGY_NAMES, NO_STRATEGY)

#: Values that mean "no strategy" to ``resolve_strategy`` (compared stripped, lower case).
OFF_VALUES: tuple[str, ...] = ("", NO_STRATEGY, "off")

#: Other spellings of the keys, after normalising (lower case, spaces/underscores to "-"):
#: "Chain of Thought", "CHAIN_OF_THOUGHT", "Tree-of-Thoughts", ...
STRATEGY_ALIASES: dict[str, str] = {
    "chain-of-thought": CHAIN_OF_THOUGHT,
    "chain-of-thoughts": CHAIN_OF_THOUGHT,
    "chainofthought": CHAIN_OF_THOUGHT,
    "tree-of-thoughts": TREE_OF_THOUGHTS,
    "tree-of-thought": TREE_OF_THOUGHTS,
    "treeofthoughts": TREE_OF_THOUGHTS,
}


def canonical_strategy(name: str) -> str:
    """The key for a strategy name or alias (``"Chain of Thought"`` → ``"cot"``).

    Raises ``ValueError`` listing the choices for anything else (``"none"`` included:
    it names no strategy).
    """
    key = re.sub(r"[\s_]+", "-", str(name).strip().lower())
    key = STRATEGY_ALIASES.get(key, key)
    if key not in STRATEGY_NAMES:
        choices = ", ".join(STRATEGY_CHOICES)
        raise ValueError(f"unknown strategy {name!r}; choose one of: {choices}")
    return key
