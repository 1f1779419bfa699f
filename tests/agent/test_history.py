"""History validity rules and the unit helpers that compaction relies on."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.history import (
    HistoryError,
    Unit,
    history_problems,
    signatures,
    turn_start,
    units,
    validate_history,
)


def call(i: str, name: str = "read_file") -> dict:
    return {"id": i, "name": name, "arguments": {"path": f"{i}.txt"}}


def result(i: str) -> dict:
    return {"role": "tool", "tool_call_id": i, "name": "read_file", "content": "ok", "is_error": False}


GOOD = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "read a and b"},
    {"role": "assistant", "content": "", "thinking": [{"text": "t", "signature": "S1"}],
     "tool_calls": [call("a"), call("b")]},
    result("a"),
    result("b"),
    {"role": "assistant", "content": "done", "thinking": [{"text": "", "redacted": True, "data": "xx"}]},
    {"role": "user", "content": "thanks"},
]


def test_a_good_history_is_valid() -> None:
    assert history_problems(GOOD) == []
    validate_history(GOOD)
    validate_history(GOOD[:-1], require_final_assistant=True)


@pytest.mark.parametrize(("history", "fragment", "index"), [
    ([{"role": "assistant", "content": "hi"}], "starts with 'assistant'", 0),
    ([{"role": "user", "content": "q"}, result("x")], "answers no open tool call", 1),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [call("a")]},
      {"role": "user", "content": "?"}], "before the results", 2),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [call("a")]}],
     "have no result", 2),
    ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [call("a")]},
      result("a"), {"role": "assistant", "content": "", "tool_calls": [call("a")]}, result("a")],
     "duplicate tool call id", 3),
    ([{"role": "user", "content": "q"},
      {"role": "assistant", "content": "", "thinking": [{"redacted": True}]}], "redacted thinking", 1),
    ([{"role": "user", "content": "q"}, {"role": "robot", "content": "?"}], "unknown role", 1),
])
def test_broken_histories_name_the_first_problem(history, fragment, index) -> None:
    with pytest.raises(HistoryError, match=fragment) as err:
        validate_history(history)
    assert err.value.index == index


def test_require_final_assistant() -> None:
    with pytest.raises(HistoryError, match="does not end with an assistant answer"):
        validate_history(GOOD, require_final_assistant=True)


def test_units_keep_tool_calls_with_their_results() -> None:
    msgs = [m for m in GOOD if m["role"] != "system"]
    assert units(msgs) == [Unit(0, 1), Unit(1, 4), Unit(4, 5), Unit(5, 6)]
    assert units(msgs)[1].messages(msgs) == msgs[1:4]
    assert units([]) == []


def test_signatures_list_signed_blocks_only() -> None:
    assert signatures(GOOD) == [("t", "S1")]


def test_turn_start_skips_compaction_summaries() -> None:
    msgs = [m for m in GOOD if m["role"] != "system"]
    assert turn_start(msgs) == 5
    assert turn_start(msgs[:5]) == 0
    assert turn_start([{"role": "user", "content": "[summary]", "kind": "summary"},
                       {"role": "assistant", "content": "x"}]) == 2
    assert turn_start([]) == 0
