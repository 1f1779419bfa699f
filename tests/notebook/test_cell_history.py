"""``CellHistory``: the turn of each history message, kept through rewrites, and which
turns a cell's re-run can take out (``notebook/cell_turns.py``)."""

from __future__ import annotations

from types import SimpleNamespace

from jupyter_brain.agent.events import EventLog
from jupyter_brain.cell_turns import CellHistory
from jupyter_brain.notebook.cell_identity import CellRun, source_key


def turn(history, tags_from, turn_id, question, answer, *, rewrite=None):
    """A finished turn as ``Session.run`` sees it; ``rewrite`` stands for a compaction of the prefix."""
    prefix = rewrite(history) if rewrite else history
    new = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return SimpleNamespace(turn_id=turn_id, messages=[*prefix, *new], new_messages=new)


def run(cells, log, history, run_, turn_id, question, answer, **kw):
    sent = cells.before_turn(history, run_)
    result = turn(sent, None, turn_id, question, answer, **kw)
    log.append_messages("s", turn_id, result.messages[len(result.messages) - len(result.new_messages):])
    log.flush()
    return sent, cells.after_turn(result, run_)


def test_a_compaction_keeps_the_turns_of_the_messages_it_kept():
    log = EventLog(":memory:")
    cells = CellHistory(log, "s", [])
    a, b = CellRun("id:a"), CellRun("id:b")
    _, history = run(cells, log, [], a, "t1", "qa", "aa")
    _, history = run(cells, log, history, b, "t2", "qb", "bb")

    def compact(h):  # copies of the kept messages, as a rewrite may make; the stored history rewritten too
        kept = [{"role": "user", "content": "[summary]"}, {"role": "assistant", "content": "ok"},
                *[dict(m) for m in h[2:]]]
        log.replace_history("s", kept)
        return kept

    _, history = run(cells, log, history, CellRun("id:c"), "t3", "qc", "cc", rewrite=compact)
    assert cells.tags == ["", "", "t2", "t2", "t3", "t3"]
    assert CellHistory(log, "s", history).tags == cells.tags  # the stored rows got their turns back
    sent, history = run(cells, log, history, b, "t4", "qb again", "bb2")  # b's turn survived the compaction:
    assert [m["content"] for m in sent] == ["[summary]", "ok"]  # the new one takes its place
    assert [m["content"] for m in history] == ["[summary]", "ok", "qb again", "bb2", "qc", "cc"]
    sent, _ = run(cells, log, history, a, "t5", "qa again", "aa2")  # a's turn is in the summary: it stays there,
    assert [m["content"] for m in sent] == ["[summary]", "ok", "qb again", "bb2", "qc", "cc"]  # the new one at the end
    assert set(cells.table.replaced("s")) == {"t1", "t2"}
    log.close()


def test_a_removal_that_would_break_the_history_is_not_made():
    log = EventLog(":memory:")
    history = [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "x", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "x", "content": "r"},
        {"role": "assistant", "content": "a1"},
    ]
    cells = CellHistory(log, "s", [])
    cells.tags = ["t0", "t1", "t1", "t1"]  # t1's messages lack their user message (cut by a rewrite)
    cells.table.add("s", "t1", CellRun("id:a"), appended=False, replaces=[])
    assert cells.before_turn(history, CellRun("id:a")) == history
    log.close()


def test_the_fallback_key_ignores_append_and_spacing():
    assert source_key("--provider bot", " Hello\n") == source_key("--provider  bot --append", "Hello")
    assert source_key("--provider bot", "Hello") != source_key("--provider bot", "Hello!")
    assert source_key("", "Hello").startswith("src:")
