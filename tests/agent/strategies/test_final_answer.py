"""The answer is the answer (#40): ``TurnResult.text`` holds a strategy's Final Answer without
the scaffolding around it; the text as written stays in ``raw_text``."""

from __future__ import annotations

from jupyter_brain.agent.strategies import final_answer
from jupyter_brain.agent.strategies.react import ReActStrategy


def test_react_scaffolding_is_left_out() -> None:
    text = "Observation: Figure 1 is drawn.\nFinal Answer: **July** had the largest drop.\nIt recovers after."
    assert final_answer(text, ReActStrategy()) == "**July** had the largest drop.\nIt recovers after."


def test_a_decorated_label_and_the_last_answer_count() -> None:
    text = "Final Answer: first try\nThought: no, check again\n**Final Answer:** 42"
    assert final_answer(text, ReActStrategy()) == "42"


def test_without_a_strategy_a_final_answer_line_still_counts() -> None:
    assert final_answer("I looked.\nFinal answer: 7 rows", None) == "7 rows"


def test_text_without_a_final_answer_is_kept_as_written() -> None:
    text = "Thought: I will look.\nThe answer is 3."
    assert final_answer(text, ReActStrategy()) == text
    assert final_answer("", None) == ""
    assert final_answer("Final Answer:", None) == "Final Answer:"  # nothing after the label: kept
