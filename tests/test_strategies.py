"""Reasoning strategies, StrategyStep and the streaming strategy parser."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_brain.agent.strategies import (
    Action,
    Branch,
    ChainOfThoughtStrategy,
    FinalAnswer,
    Observation,
    ReActStrategy,
    ReasoningStrategy,
    Reflection,
    ReflexionStrategy,
    StrategyParser,
    StrategyPreset,
    Thought,
    TreeOfThoughtsStrategy,
    parse_strategy_text,
    resolve_strategy,
    step_from_dict,
)

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


# ── presets ──────────────────────────────────────────────────────────────────


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


# ── StrategyStep display and serialisation ───────────────────────────────────


def test_step_display_like_reference():
    assert str(Thought(text="testing")) == "Thought: testing"
    assert str(Thought(text="x", label="Plan")) == "Plan: x"
    assert str(Action(tool="read", args={"a": 1})) == "Action: read"
    assert str(Observation(text="o")) == "Observation: o"
    assert str(Reflection(critique="c", revised_plan="p")) == "Reflection: c"
    assert str(FinalAnswer(text="42")) == "Final: 42"
    branch = Branch(branch_id=1, thought="try X", score=0.85)
    assert "0.85" in str(branch)
    assert str(branch) == "Branch[1] (score=0.85): try X"
    assert str(Branch(branch_id=2, thought="y", score=0.5, selected=True)) == "Branch[2] (score=0.50) selected: y"


@pytest.mark.parametrize(
    "step",
    [
        Thought(text="t", label="Step 1"),
        Action(tool="read", args={"path": "a.csv"}),
        Observation(text="o"),
        Reflection(critique="c", revised_plan="p"),
        Branch(branch_id=3, thought="b", score=0.25, decision_point=2, selected=True),
        FinalAnswer(text="f"),
    ],
)
def test_step_round_trip(step):
    again = step_from_dict(step.model_dump())
    assert again == step and type(again) is type(step)
    assert step_from_dict(step.model_dump(mode="json")) == step


# ── parser: ReAct ────────────────────────────────────────────────────────────


def test_react_basic():
    text = (
        "Thought: I need the file\n"
        "Action: read_file\n"
        'Action Input: {"path": "data.csv"}\n'
        "Observation: it has 3 columns\n"
        "Final Answer: three\n"
    )
    assert parse_strategy_text(text, "react") == [
        Thought(text="I need the file"),
        Action(tool="read_file", args={"path": "data.csv"}),
        Observation(text="it has 3 columns"),
        FinalAnswer(text="three"),
    ]


def test_react_markdown_decorated_labels():
    text = (
        "**Thought:** bold inside\n"
        "**Thought**: bold outside\n"
        "- Action: search\n"
        "### Observation: heading\n"
        "> Thought: quoted\n"
        "__Final Answer__: 42"
    )
    assert parse_strategy_text(text, "react") == [
        Thought(text="bold inside"),
        Thought(text="bold outside"),
        Action(tool="search", args={}),
        Observation(text="heading"),
        Thought(text="quoted"),
        FinalAnswer(text="42"),
    ]


def test_react_labels_case_insensitive_and_multiline():
    text = "thought: line one\nline two\n\nACTION: `lookup`\nfinal   answer: x"
    assert parse_strategy_text(text, "react") == [
        Thought(text="line one\nline two"),
        Action(tool="lookup", args={}),
        FinalAnswer(text="x"),
    ]


def test_react_code_fences_are_not_labels():
    text = "Thought: look\n```python\nAction: not a label\nObservation: nor this\n```\nAction: run\n"
    steps = parse_strategy_text(text, "react")
    assert [type(s) for s in steps] == [Thought, Action]
    assert "Action: not a label" in steps[0].text
    assert steps[1].tool == "run"


def test_react_action_forms():
    cases = {
        'Action: search({"q": "x"})': Action(tool="search", args={"q": "x"}),
        'Action: search {"q": "x"}': Action(tool="search", args={"q": "x"}),
        "Action: search(free text)": Action(tool="search", args={"input": "free text"}),
        "Action: `my.tool-name`": Action(tool="my.tool-name", args={}),
    }
    for text, expected in cases.items():
        assert parse_strategy_text(text, "react") == [expected], text


def test_react_multiline_action_input_json():
    text = 'Action: query\nAction Input: {\n  "sql": "select 1",\n  "limit": 5\n}\nObservation: ok'
    steps = parse_strategy_text(text, "react")
    assert steps[0] == Action(tool="query", args={"sql": "select 1", "limit": 5})
    assert steps[1] == Observation(text="ok")


def test_action_input_overrides_inline_args():
    steps = parse_strategy_text('Action: t {"a": 1}\nAction Input: {"b": 2}', "react")
    assert steps == [Action(tool="t", args={"b": 2})]


def test_text_before_first_label_is_not_a_step():
    assert parse_strategy_text("Sure, let me help.\nThought: go", "react") == [Thought(text="go")]
    assert parse_strategy_text("no labels at all\njust prose", "react") == []


def test_empty_thought_is_dropped():
    assert parse_strategy_text("Thought:\nAction: x", "react") == [Action(tool="x", args={})]


def test_crlf_line_endings():
    assert parse_strategy_text("Thought: a\r\nFinal Answer: b\r\n", "react") == [
        Thought(text="a"),
        FinalAnswer(text="b"),
    ]


# ── parser: Reflexion ────────────────────────────────────────────────────────


def test_reflexion_cycle_with_revised_plan():
    text = (
        "Plan: load the csv\n"
        "Act: read_file\n"
        "Observe: file missing\n"
        "Reflect: I guessed the path\n"
        "Revised plan: list the directory first\n"
        "and then read it\n"
        "Final Answer: done\n"
    )
    assert parse_strategy_text(text, "reflexion") == [
        Thought(text="load the csv", label="Plan"),
        Action(tool="read_file", args={}),
        Observation(text="file missing"),
        Reflection(critique="I guessed the path", revised_plan="list the directory first\nand then read it"),
        FinalAnswer(text="done"),
    ]


def test_reflexion_long_label_forms():
    text = "**Reflection:** too slow\nObservation: x\nAction: t"
    assert parse_strategy_text(text, "reflexion") == [
        Reflection(critique="too slow"),
        Observation(text="x"),
        Action(tool="t", args={}),
    ]


def test_revised_plan_outside_a_reflection_is_kept():
    # It continues a Reflection only; elsewhere it is a labelled thought (its text is never dropped).
    assert parse_strategy_text("Plan: a\nRevised plan: b\nAct: x\n", "reflexion") == [
        Thought(text="a", label="Plan"),
        Thought(text="b", label="Revised plan"),
        Action(tool="x", args={}),
    ]


def test_action_input_without_action_is_kept():
    assert parse_strategy_text('Thought: t\nAction Input: {"a": 1}\n', "react") == [
        Thought(text="t"),
        Thought(text='{"a": 1}', label="Action Input"),
    ]


def test_pending_shows_an_unterminated_label_line_as_the_new_step():
    p = StrategyParser("react")
    p.feed("Thought: a\nFinal Answer: The mean is")
    assert p.pending() == FinalAnswer(text="The mean is")
    assert p.steps == []  # peeking committed nothing
    p.feed(" 4.2")
    assert p.finish() == [Thought(text="a"), FinalAnswer(text="The mean is 4.2")]


def test_pending_action_input_continuation():
    p = StrategyParser("react")
    p.feed('Action: search\nAction Input: {"q": "x"}')
    assert p.pending() == Action(tool="search", args={"q": "x"})


def test_pending_inside_fence_is_text():
    p = StrategyParser("react")
    p.feed("Thought: a\n```\nAction: b")
    assert p.pending() == Thought(text="a\n```\nAction: b")


# ── parser: Chain-of-Thought ─────────────────────────────────────────────────


def test_cot_steps():
    text = "Let's think step by step.\nStep 1: load\nStep  2: count\nnulls too\nVerify: 3 == 3\nAnswer: 3"
    assert parse_strategy_text(text, "cot") == [
        Thought(text="load", label="Step 1"),
        Thought(text="count\nnulls too", label="Step 2"),
        Thought(text="3 == 3", label="Verify"),
        FinalAnswer(text="3"),
    ]


def test_cot_final_answer_label():
    assert parse_strategy_text("**Step 1:** a\n**Final Answer:** b", "cot") == [
        Thought(text="a", label="Step 1"),
        FinalAnswer(text="b"),
    ]


# ── parser: Tree-of-Thoughts ─────────────────────────────────────────────────

TOT = """=== Decision Point ===
Candidate 1: Use pandas groupby → Score: 0.9
Candidate 2: Loop in Python -> Score: 0.3
Candidate 3: SQL (score: 0.55)
Selected: Candidate 1 (score: 0.9)
Reason: fastest and simplest
=== Decision Point ===
Candidate 1: plot with matplotlib → Score: 0.8
Candidate 2: print a table → Score: 0.2
Selected: 2
Final Answer: a table
"""


def test_tot_decision_points_selected_and_pruned():
    steps = parse_strategy_text(TOT, "tot")
    assert steps == [
        Branch(branch_id=1, thought="Use pandas groupby", score=0.9, decision_point=1),
        Branch(branch_id=2, thought="Loop in Python", score=0.3, decision_point=1),
        Branch(branch_id=3, thought="SQL", score=0.55, decision_point=1),
        Branch(branch_id=1, thought="Use pandas groupby", score=0.9, decision_point=1, selected=True),
        Thought(text="fastest and simplest", label="Reason"),
        Branch(branch_id=1, thought="plot with matplotlib", score=0.8, decision_point=2),
        Branch(branch_id=2, thought="print a table", score=0.2, decision_point=2),
        Branch(branch_id=2, thought="print a table", score=0.2, decision_point=2, selected=True),
        FinalAnswer(text="a table"),
    ]
    pruned = TreeOfThoughtsStrategy().pruned(steps)
    assert [(b.decision_point, b.branch_id) for b in pruned] == [(1, 2), (2, 2)]


def test_tot_selected_without_number_is_thought():
    assert parse_strategy_text("Selected: the second one", "tot") == [Thought(text="the second one", label="Selected")]


def test_tot_candidate_without_score():
    assert parse_strategy_text("Candidate 1: just try", "tot") == [Branch(branch_id=1, thought="just try", score=0.0)]


def test_tot_first_decision_point_header_does_not_bump():
    steps = parse_strategy_text("=== Decision Point ===\n=== Decision Point ===\nCandidate 1: a → Score: 0.5", "tot")
    assert steps == [Branch(branch_id=1, thought="a", score=0.5, decision_point=1)]


# ── streaming ────────────────────────────────────────────────────────────────


def test_feed_emits_a_step_once_the_next_label_arrives():
    p = StrategyParser("react")
    assert p.feed("Thought: I will") == []
    assert p.pending() == Thought(text="I will")
    assert p.feed(" look\nAct") == []
    assert p.pending() == Thought(text="I will look\nAct")  # the unterminated line shows too
    out = p.feed("ion: search\n")
    assert out == [Thought(text="I will look")]
    assert p.pending() == Action(tool="search", args={})
    assert p.finish() == [Action(tool="search", args={})]
    assert p.pending() is None
    assert p.steps == [Thought(text="I will look"), Action(tool="search", args={})]


def test_pending_none_before_any_label():
    p = StrategyParser("cot")
    assert p.pending() is None
    p.feed("Let's think")
    assert p.pending() is None


def test_pending_tot_candidate_does_not_register():
    p = StrategyParser("tot")
    p.feed("Candidate 1: a → Score: 0.7\n")
    assert p.pending() == Branch(branch_id=1, thought="a", score=0.7)
    p.feed("Selected: Candidate 1")
    # the open candidate counts for the selection, yet nothing is committed by peeking
    assert p.pending() == Branch(branch_id=1, thought="a", score=0.7, selected=True)
    assert p.steps == [] and p._candidates == {}
    assert p.finish() == [
        Branch(branch_id=1, thought="a", score=0.7),
        Branch(branch_id=1, thought="a", score=0.7, selected=True),
    ]


SAMPLES = {
    "react": (
        "Sure.\n**Thought:** need data\nAction: read_file\nAction Input: {\"path\":\n \"a.csv\"}\n"
        "Observation: ok\n```\nThought: inside fence\n```\r\nFinal Answer: done"
    ),
    "reflexion": "Plan: p\nAct: t(1)\nObserve: o\nReflect: r\nRevised plan: rp\nmore\nFinal Answer: f\n",
    "cot": "Let's think.\nStep 1: a\nStep 2: b\n\nVerify: ok\nAnswer: 4\n",
    "tot": TOT,
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=st.sampled_from(sorted(SAMPLES)),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=25),
)
def test_any_chunking_equals_whole_parse(key, cuts):
    text = SAMPLES[key]
    points = sorted({c % (len(text) + 1) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    assert "".join(chunks) == text
    parser = StrategyParser(key)
    out = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
        parser.pending()  # peeking never changes the result
    out.extend(parser.finish())
    expected = parse_strategy_text(text, key)
    assert out == expected
    assert parser.steps == expected


_ALPHABET = st.sampled_from(
    ["Thought: ", "Action: ", "Action Input: ", "Observation: ", "Final Answer: ", "Plan: ", "Act: ",
     "Reflect: ", "Revised plan: ", "Step 1: ", "Verify: ", "Candidate 2: ", "Selected: 2", " → Score: 0.7",
     "=== Decision Point ===", "```", "**", "\n", "\r\n", " ", "x", "{\"a\": 1}", "tool(1)", "é", "-"]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=st.sampled_from(["react", "reflexion", "cot", "tot"]),
    pieces=st.lists(_ALPHABET, max_size=40),
    data=st.data(),
)
def test_any_chunking_equals_whole_parse_random_text(key, pieces, data):
    text = "".join(pieces)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=20))
    points = sorted(set(cuts))
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    parser = StrategyParser(key)
    out = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
        parser.pending()  # peeking never changes the result
    out.extend(parser.finish())
    assert out == parse_strategy_text(text, key)
