"""The strategy classes: their prompts, the labels their parsers recognise, their limits."""

from __future__ import annotations

import re
from typing import ClassVar

import pytest

from jupyter_brain.agent.strategies import (
    STRATEGY_CLASSES,
    Action,
    Branch,
    ChainOfThoughtStrategy,
    FinalAnswer,
    ReActStrategy,
    ReasoningStrategy,
    Reflection,
    ReflexionStrategy,
    StrategyPreset,
    Thought,
    TreeOfThoughtsStrategy,
)
from jupyter_brain.agent.strategies.parser import LABEL_KINDS

# ── prompts ──────────────────────────────────────────────────────────────────


def test_react_prompt():
    p = ReActStrategy(10).system_prompt("agent-1", "/project")
    for word in ("ReAct", "Thought", "Action", "Observation", "Final Answer", "agent-1", "/project", "10"):
        assert word in p


def test_reflexion_prompt():
    p = ReflexionStrategy(15, 3).system_prompt("agent-2", "/work")
    for word in ("Reflexion", "Reflect", "self-critique", "Plan", "Act", "Observe", "agent-2", "/work"):
        assert word in p
    assert "At most 3 reflection cycles" in p
    assert "At most 15 steps" in p


def test_cot_prompt():
    p = ChainOfThoughtStrategy(10).system_prompt("agent-3", "/code")
    assert "Chain-of-Thought" in p or "Chain of Thought" in p
    assert "step by step" in p
    assert "Step 1:" in p and "agent-3" in p and "/code" in p


def test_tot_prompt_uses_branching_factor_and_threshold():
    p = TreeOfThoughtsStrategy(20, 4, 0.55).system_prompt("agent-4", "/proj")
    assert "Tree-of-Thoughts" in p or "Tree of Thoughts" in p
    assert "agent-4" in p
    assert "propose 4 candidate approaches" in p
    assert "Candidate 4:" in p and "Candidate 5:" not in p
    assert "0.6" in p  # threshold to one decimal, like the reference
    p3 = TreeOfThoughtsStrategy().system_prompt("a", "/")
    assert "Candidate 3:" in p3 and "Candidate 4:" not in p3 and "0.4" in p3


def test_base_strategy_prompt_not_implemented():
    with pytest.raises(NotImplementedError):
        ReasoningStrategy().system_prompt("a", "/")


# ── names, defaults, is_complete ─────────────────────────────────────────────


def test_names_descriptions_defaults():
    assert (ReActStrategy().name, ReActStrategy().max_steps) == ("ReAct", 15)
    rx = ReflexionStrategy()
    assert (rx.name, rx.max_steps, rx.max_reflections) == ("Reflexion", 20, 5)
    assert (ChainOfThoughtStrategy().name, ChainOfThoughtStrategy().max_steps) == ("Chain-of-Thought", 15)
    tot = TreeOfThoughtsStrategy()
    assert (tot.name, tot.max_steps, tot.branching_factor, tot.pruning_threshold) == ("Tree-of-Thoughts", 25, 3, 0.4)
    for preset in StrategyPreset.all():
        s = preset.create()
        assert s.name and s.description and s.max_steps > 0


def test_react_completion():
    s = ReActStrategy(3)
    assert not s.is_complete([Thought(text="thinking"), Action(tool="read", args={})])
    assert s.is_complete([Thought(text="thinking"), FinalAnswer(text="done")])
    assert not s.is_complete([])


@pytest.mark.parametrize("cls", [ReActStrategy, ChainOfThoughtStrategy, TreeOfThoughtsStrategy])
def test_max_steps_completion(cls):
    s = cls(2)
    assert not s.is_complete([Thought(text="a")])
    assert s.is_complete([Thought(text="a"), Thought(text="b")])


def test_reflexion_max_reflections():
    s = ReflexionStrategy(20, 2)
    one = [Reflection(critique="a", revised_plan="b")]
    assert not s.is_complete(one)
    assert s.is_complete(one + [Reflection(critique="c", revised_plan="d")])
    assert s.is_complete([FinalAnswer(text="x")])
    assert ReflexionStrategy(2, 10).is_complete([Thought(text="a"), Thought(text="b")])


def test_tot_pruned():
    s = TreeOfThoughtsStrategy(pruning_threshold=0.5)
    steps = [
        Branch(branch_id=1, thought="a", score=0.9),
        Branch(branch_id=2, thought="b", score=0.3),
        Branch(branch_id=3, thought="c", score=0.5),
        Branch(branch_id=2, thought="b", score=0.3, selected=True),
        Thought(text="x"),
    ]
    assert s.pruned(steps) == [steps[1]]


# ── each strategy's prompt and its parser's labels agree ────────────────────

# A line of a prompt's "## Format" block that asks for a label: "Thought: <...>",
# "Revised plan: <...>", "Step 1: <...>", "Selected: Candidate N (...)".
_ASKED = re.compile(r"^[A-Z][A-Za-z]*(?: [A-Za-z]+)*(?: \d+)?:")

EVERY_STRATEGY = [
    *(cls() for cls in STRATEGY_CLASSES.values()),
    ReflexionStrategy(7, 2),
    TreeOfThoughtsStrategy(branching_factor=5),
]


def _format_lines(strategy: ReasoningStrategy) -> list[str]:
    prompt = strategy.system_prompt("agent", "/work")
    assert "## Format\n" in prompt, f"{strategy!r}: the prompt has no '## Format' block"
    return prompt.split("## Format\n", 1)[1].split("\n## ", 1)[0].splitlines()


def unparsed_labels(strategy: ReasoningStrategy) -> list[str]:
    """Format lines that ask for a label the strategy's parser does not recognise."""
    parser = strategy.parser()
    return [line for line in _format_lines(strategy) if _ASKED.match(line) and parser.label_of(line) is None]


def unasked_labels(strategy: ReasoningStrategy) -> list[str]:
    """Label patterns of ``strategy.labels`` that the prompt's format never asks for."""
    parser = strategy.parser()
    asked = [word for line in _format_lines(strategy) if (word := parser.label_of(line))]
    return [p for p in strategy.labels if not any(re.fullmatch(p, word, re.I) for word in asked)]


@pytest.mark.parametrize("strategy", EVERY_STRATEGY, ids=repr)
def test_every_label_the_prompt_asks_for_is_parsed(strategy):
    assert any(_ASKED.match(line) for line in _format_lines(strategy))
    assert unparsed_labels(strategy) == []


@pytest.mark.parametrize("strategy", EVERY_STRATEGY, ids=repr)
def test_the_prompt_asks_for_every_label(strategy):
    assert strategy.labels
    assert unasked_labels(strategy) == []


@pytest.mark.parametrize("strategy", EVERY_STRATEGY, ids=repr)
def test_the_format_block_parses_into_the_labelled_steps(strategy):
    parser = strategy.parser()
    lines = _format_lines(strategy)
    kinds = {type(step) for step in parser.feed("\n".join(lines) + "\n") + parser.finish()}
    assert FinalAnswer in kinds and len(kinds) >= 2


def test_the_agreement_checks_catch_a_drifted_strategy():
    class Drifted(ReActStrategy):
        """Asks for a "Critique:" line its parser ignores, and no longer for "Observation:"."""

        def system_prompt(self, agent_id: str, working_directory: str) -> str:
            prompt = super().system_prompt(agent_id, working_directory)
            return prompt.replace("Observation: <your analysis of the result>", "Critique: <what went wrong>")

    assert unparsed_labels(Drifted()) == ["Critique: <what went wrong>"]
    assert unasked_labels(Drifted()) == ["observation"]


@pytest.mark.parametrize("cls", list(STRATEGY_CLASSES.values()))
def test_labels_open_known_step_kinds(cls):
    assert set(cls.labels.values()) | set(cls.extra_labels.values()) <= LABEL_KINDS
    assert not set(cls.labels) & set(cls.extra_labels)


def test_parser_is_built_from_the_strategy_labels():
    class Terse(ReActStrategy):
        labels: ClassVar[dict[str, str]] = {"t": "thought", "a": "action", r"final\s+answer": "final"}
        extra_labels: ClassVar[dict[str, str]] = {}

    steps = Terse().parser().feed("T: look\nA: read\nThought: not a label here\nFinal Answer: x\n")
    assert steps == [Thought(text="look"), Action(tool="read", args={})]
    # The built-in strategy keeps its own labels.
    assert ReActStrategy().parser().label_of("Thought: x") == "Thought"
    assert ReActStrategy().parser().label_of("T: x") is None
