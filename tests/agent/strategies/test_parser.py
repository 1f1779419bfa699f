"""The streaming strategy parser: labelled text of each strategy → steps, in any chunking."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_brain.agent.strategies import (
    Action,
    Branch,
    FinalAnswer,
    Observation,
    Reflection,
    StrategyParser,
    Thought,
    TreeOfThoughtsStrategy,
    parse_strategy_text,
)

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
