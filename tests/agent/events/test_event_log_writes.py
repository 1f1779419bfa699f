"""How EventLog writes: events serialised once, rows inserted many per statement, the same
rows and the same reads as one ``model_dump_json`` / ``json.dumps`` per row."""

from __future__ import annotations

import json
import sqlite3

import pytest

from jupyter_brain.agent.events import EVENT_ADAPTER, EventLog, TextDelta, ToolCallArgs, ToolCallEnd, UsageEvent
from jupyter_brain.agent.events.rows import event_json

from .event_samples import S, T, all_kinds, stamp


def test_event_json_reads_back_as_model_dump_json_does():
    extra = stamp([
        ToolCallArgs(step=1, call_id="c", name="n", arguments={"t": (1, 2), "big": 2**70, "s": "é\u2028\"q\""}),
        UsageEvent(step=1, cost_usd=float("inf")),
        ToolCallEnd(step=1, call_id="c", name="n", status="ok", duration_ms=float("nan")),
    ])
    for event in [*all_kinds(), *extra]:
        ours, theirs = event_json(event), event.model_dump_json()
        assert json.loads(ours) == json.loads(theirs)  # NaN and infinity: null in both
        if event is not extra[-1]:  # a NaN duration reads back as neither (null is no float)
            assert EVENT_ADAPTER.validate_json(ours) == EVENT_ADAPTER.validate_json(theirs)
    delta = stamp([TextDelta(step=1, text="a")])[0]
    assert json.loads(event_json(delta, "merged")) == json.loads(delta.model_copy(update={"text": "merged"})
                                                                  .model_dump_json())


def test_rows_keep_their_order_across_statement_chunks(tmp_path):
    # 64, 16, 4 and 1 rows per INSERT: counts that use every chunk size, in one batch and across many.
    path = tmp_path / "e.sqlite"
    log = EventLog(path, flush_every=10_000)
    events = stamp([TextDelta(step=i, text=f"t{i}") if i % 7 == 0 else UsageEvent(step=i, input_tokens=i)
                    for i in range(64 + 16 + 4 + 3)])
    for e in events:
        log.append(e)
    messages = [{"role": "user", "content": f"m{i}"} for i in range(85)]
    log.append_messages(S, T, messages)
    log.flush()
    assert log.events(turn_id=T) == events
    assert log.load_history(S) == messages
    log.close()
    with sqlite3.connect(path) as db:
        seqs = [r[0] for r in db.execute("SELECT seq FROM events ORDER BY id")]
    assert seqs == list(range(len(events)))


@pytest.mark.parametrize("message", [
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "f", "arguments": {"x": [1, 2.5]}}]},
    {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "héllo ✓", "is_error": False},
    {"role": "user", "content": {"set": {1}, "nan": float("nan")}},
])
def test_history_rows_are_stored_as_json_dumps_wrote_them(tmp_path, message):
    path = tmp_path / "h.sqlite"
    log = EventLog(path)
    log.append_messages(S, T, [message])
    log.flush()
    log.close()
    with sqlite3.connect(path) as db:
        (data,) = db.execute("SELECT data FROM messages").fetchone()
    assert data == json.dumps(message, default=str)


def test_an_event_is_stored_as_it_was_when_appended(tmp_path):
    log = EventLog(tmp_path / "s.sqlite")
    event = stamp([ToolCallEnd(step=1, call_id="c", name="n", status="ok", result_preview="first")])[0]
    log.append(event)
    event.result_preview = "changed later by a view"
    (stored,) = log.events(turn_id=T)
    assert stored.result_preview == "first"
    log.close()


def test_a_message_json_cannot_hold_is_skipped_and_the_rest_stored(tmp_path):
    log = EventLog(tmp_path / "c.sqlite")
    loop: dict = {"role": "user"}
    loop["content"] = loop  # circular: no JSON for it
    log.append_messages(S, T, [{"role": "user", "content": "a"}, loop, {"role": "assistant", "content": "b"}])
    assert isinstance(log.last_error, ValueError)
    assert log.load_history(S) == [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    log.close()


def test_a_turn_end_commits_on_the_callers_thread_and_survives_ctrl_c(tmp_path):
    import threading

    from jupyter_brain.agent.events import StepStart, TurnEnd, TurnStart

    log = EventLog(tmp_path / "t.sqlite")
    writers: list[str] = []
    real_write = log._write

    def write(*batch):
        writers.append(threading.current_thread().name)
        return real_write(*batch)

    log._write = write  # type: ignore[method-assign]
    first = stamp([TurnStart(user_message="q"), StepStart(step=1), TurnEnd(status="completed", text="a")])
    for e in first:
        log.append(e)
    assert writers == [threading.current_thread().name]  # no hand-over for the last batch
    assert log.events(turn_id=T) == first

    calls = []

    def interrupted(*batch):
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            raise KeyboardInterrupt  # Ctrl-C lands while the turn's end is being committed
        return real_write(*batch)

    log._write = interrupted  # type: ignore[method-assign]
    second = stamp([TurnStart(user_message="q2"), TurnEnd(status="completed", text="b")], turn="turn2")
    log.append(second[0])
    with pytest.raises(KeyboardInterrupt):
        log.append(second[1])
    assert log.events(turn_id="turn2") == second  # rolled back here, committed by the writer thread
    assert calls[0] == threading.current_thread().name and calls[1] == "jupyter-brain-eventlog"
    assert log.turns(S)[-1].status == "completed"
    log.close()
