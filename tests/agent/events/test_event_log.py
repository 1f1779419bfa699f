"""EventLog, the SQLite store: events, turns, history, records, redaction and durability."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest

from jupyter_brain.agent.events import (
    EventLog,
    StepEnd,
    StepStart,
    TextDelta,
    ThinkingDelta,
    ToolCallArgs,
    ToolCallStart,
    TurnEnd,
    TurnStart,
)
from jupyter_brain.agent.redact import Redactor

from .event_samples import S, T, all_kinds, stamp

# ── EventLog round trip ──────────────────────────────────────────────────────


@pytest.fixture(params=["memory", "file"])
def log(request, tmp_path):
    path = ":memory:" if request.param == "memory" else tmp_path / "sub" / "events.sqlite"
    el = EventLog(path)
    yield el
    el.close()


def test_round_trip_every_event_type(log):
    events = all_kinds()
    for e in events:
        log.append(e)
    assert log.events(turn_id=T) == events
    assert log.events(session_id=S) == events
    assert log.events() == events


def test_wal_mode_on_file(tmp_path):
    path = tmp_path / "events.sqlite"
    with EventLog(path) as el:
        mode = el._db.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    other = sqlite3.connect(path)
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    other.close()


def test_creates_parent_directories(tmp_path):
    path = tmp_path / "a" / "b" / "events.sqlite"
    EventLog(path).close()
    assert path.exists()


def run_turn(log, turn, message, text, status="completed", session=S, deltas=("a", "b")):
    evs = [TurnStart(user_message=message), StepStart(step=1)]
    evs += [TextDelta(step=1, text=d) for d in deltas]
    evs += [StepEnd(step=1), TurnEnd(status=status, text=text)]
    for e in stamp(evs, session, turn):
        log.append(e)
    return evs


def test_turns_in_order_with_status_and_text(log):
    run_turn(log, "t-a", "first?", "one")
    run_turn(log, "t-b", "second?", "", status="max_steps")
    run_turn(log, "t-c", "third?", "three", status="interrupted")
    run_turn(log, "other-1", "elsewhere", "x", session="other")
    turns = log.turns(S)
    assert [t.turn_id for t in turns] == ["t-a", "t-b", "t-c"]
    assert [t.index for t in turns] == [0, 1, 2]
    assert [t.status for t in turns] == ["completed", "max_steps", "interrupted"]
    assert [t.user_message for t in turns] == ["first?", "second?", "third?"]
    assert [t.text for t in turns] == ["one", "", "three"]
    assert all(t.ended is not None and t.ended >= t.started for t in turns)
    assert [t.turn_id for t in log.turns("other")] == ["other-1"]
    assert log.turns("missing") == []


def test_turn_without_end_has_no_status(log):
    for e in stamp([TurnStart(user_message="q"), StepStart(step=1)], S, "open"):
        log.append(e)
    (t,) = log.turns(S)
    assert t.status is None and t.ended is None and t.text is None


def test_events_by_turn_in_order(log):
    a = run_turn(log, "t-a", "q1", "x")
    b = run_turn(log, "t-b", "q2", "y")
    got_a = log.events(turn_id="t-a")
    assert [e.type for e in got_a] == ["turn_start", "step_start", "text_delta", "step_end", "turn_end"]
    assert [e.seq for e in got_a] == [0, 1, 2, 4, 5]
    assert [e.type for e in log.events(turn_id="t-b")] == [e.type for e in got_a]
    assert log.events(turn_id="nope") == []
    assert len(log.events(session_id=S)) == 10
    assert a and b


def test_consecutive_text_deltas_merged_exactly(log, tmp_path):
    pieces = ["Hel", "lo", ", ", "wor", "ld", "! ", "é ", "\n", "末尾"]
    evs = [TurnStart(user_message="q"), StepStart(step=1), ThinkingDelta(step=1, text="th"),
           ThinkingDelta(step=1, text="ink")]
    evs += [TextDelta(step=1, text=p) for p in pieces]
    evs += [ToolCallStart(step=1, call_id="c", name="n"), TextDelta(step=1, text="after"),
            StepEnd(step=1), StepStart(step=2), TextDelta(step=2, text="s2a"), TextDelta(step=2, text="s2b"),
            StepEnd(step=2)]
    for e in stamp(evs):
        log.append(e)
    got = log.events(turn_id=T)
    assert [e.type for e in got] == [
        "turn_start", "step_start", "thinking_delta", "text_delta", "tool_call_start", "text_delta",
        "step_end", "step_start", "text_delta", "step_end",
    ]
    assert got[2].text == "think"
    assert got[3].text == "".join(pieces) and got[3].step == 1
    assert got[5].text == "after"
    assert got[8].text == "s2as2b" and got[8].step == 2
    rows = log._db.execute("SELECT COUNT(*) FROM events WHERE type = 'text_delta'").fetchone()[0]
    assert rows == 3


def test_deltas_of_different_steps_or_turns_not_merged(log):
    evs = stamp([TextDelta(step=1, text="a"), TextDelta(step=2, text="b")])
    evs += stamp([TextDelta(step=2, text="c")], turn="other")
    for e in evs:
        log.append(e)
    assert [(e.turn_id, e.step, e.text) for e in log.events()] == [(T, 1, "a"), (T, 2, "b"), ("other", 2, "c")]


def test_text_and_thinking_deltas_not_merged_together(log):
    for e in stamp([TextDelta(step=1, text="a"), ThinkingDelta(step=1, text="b"), TextDelta(step=1, text="c")]):
        log.append(e)
    assert [(e.type, e.text) for e in log.events()] == [("text_delta", "a"), ("thinking_delta", "b"), ("text_delta", "c")]


def test_batching_visible_only_after_step_end_and_turn_end(tmp_path):
    path = tmp_path / "events.sqlite"
    el = EventLog(path)
    other = sqlite3.connect(path)

    def visible():
        return other.execute("SELECT type FROM events ORDER BY id").fetchall()

    def turns_visible():
        return other.execute("SELECT turn_id, status FROM turns").fetchall()

    for e in stamp([TurnStart(user_message="q"), StepStart(step=1), TextDelta(step=1, text="x"),
                    ToolCallStart(step=1, call_id="c", name="n")]):
        el.append(e)
    assert visible() == [] and turns_visible() == []
    step_end, turn_end = stamp([StepEnd(step=1), TurnEnd(status="completed", text="done")])
    step_end.seq, turn_end.seq = 4, 5
    el.append(step_end)
    el.sync()  # the writer thread commits the handed-over batch
    assert [r[0] for r in visible()] == ["turn_start", "step_start", "text_delta", "tool_call_start", "step_end"]
    assert turns_visible() == [(T, None)]
    el.append(turn_end)  # a turn end is committed before append returns
    assert len(visible()) == 6
    assert turns_visible() == [(T, "completed")]
    other.close()
    el.close()


def test_buffer_flushes_when_full(tmp_path):
    path = tmp_path / "events.sqlite"
    el = EventLog(path, flush_every=3)
    other = sqlite3.connect(path)
    evs = stamp([StepStart(step=i) for i in range(1, 8)])
    for e in evs[:2]:
        el.append(e)
    assert other.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    el.append(evs[2])
    el.sync()
    assert other.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 3
    other.close()
    el.close()


def test_reads_flush_pending_events(log):
    for e in stamp([TurnStart(user_message="q"), StepStart(step=1), TextDelta(step=1, text="x")]):
        log.append(e)
    assert len(log.events(turn_id=T)) == 3
    assert [t.turn_id for t in log.turns(S)] == [T]


def test_close_flushes(tmp_path):
    path = tmp_path / "events.sqlite"
    el = EventLog(path)
    for e in stamp([TurnStart(user_message="q"), StepStart(step=1)]):
        el.append(e)
    el.close()
    with EventLog(path) as again:
        assert [e.type for e in again.events(turn_id=T)] == ["turn_start", "step_start"]


# ── history ──────────────────────────────────────────────────────────────────


def test_append_and_load_history(log):
    m1 = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "name": "t", "arguments": {"a": 1}}]}]
    m2 = [{"role": "tool", "tool_call_id": "1", "name": "t", "content": "out", "is_error": False},
          {"role": "assistant", "content": "é done"}]
    log.append_messages(S, "t1", m1)
    log.append_messages(S, "t1", m2)
    log.append_messages("other", "t9", [{"role": "user", "content": "x"}])
    log.append_messages(S, "t2", [])
    assert log.load_history(S) == m1 + m2
    assert log.load_history("other") == [{"role": "user", "content": "x"}]
    assert log.load_history("missing") == []


def test_replace_history(log):
    log.append_messages(S, "t1", [{"role": "user", "content": str(i)} for i in range(5)])
    log.append_messages("other", "t", [{"role": "user", "content": "keep"}])
    summary = [{"role": "user", "content": "summary"}, {"role": "assistant", "content": "ok"}]
    log.replace_history(S, summary)
    assert log.load_history(S) == summary
    assert log.load_history("other") == [{"role": "user", "content": "keep"}]
    log.replace_history(S, [])
    assert log.load_history(S) == []


def test_history_non_json_values_stringified(log):
    class Thing:
        def __str__(self):
            return "thing!"

    log.append_messages(S, "t", [{"role": "tool", "content": Thing()}])
    assert log.load_history(S) == [{"role": "tool", "content": "thing!"}]


def test_records(log):
    log.add_record("decision", {"choice": "a", "n": 1}, session_id=S)
    log.add_record("decision", {"choice": "b"})
    log.add_record("compare", {"x": 1})
    recs = log.records("decision")
    assert [(r["session_id"], r["choice"]) for r in recs] == [(S, "a"), (None, "b")]
    assert all(isinstance(r["ts"], float) for r in recs)
    assert log.records("none") == []


def test_sessions(log):
    run_turn(log, "t1", "q", "a", session="s1")
    run_turn(log, "t2", "q", "a", session="s2")
    log.append_messages("s3", "", [{"role": "user", "content": "only history"}])
    assert set(log.sessions()) == {"s1", "s2", "s3"}


# ── redaction ────────────────────────────────────────────────────────────────


def test_redaction_applied_to_everything_stored(tmp_path):
    secret = "sk-ant-api03-" + "A" * 40
    path = tmp_path / "events.sqlite"
    el = EventLog(path, redact=Redactor(include_env=False))
    evs = stamp([
        TurnStart(user_message=f"my key is {secret}"),
        StepStart(step=1),
        TextDelta(step=1, text=secret[:20]),
        TextDelta(step=1, text=secret[20:]),  # split across deltas: merged before redaction
        ToolCallArgs(step=1, call_id="c", name="env", arguments={"key": secret}),
        StepEnd(step=1),
        TurnEnd(status="completed", text=f"done {secret}"),
    ])
    for e in evs:
        el.append(e)
    el.append_messages(S, T, [{"role": "user", "content": secret}])
    el.replace_history("s2", [{"role": "user", "content": secret}])
    el.add_record("r", {"k": secret})
    el.close()
    raw = b""
    for suffix in ("", "-wal"):
        p = tmp_path / f"events.sqlite{suffix}"
        if p.exists():
            raw += p.read_bytes()
    assert secret.encode() not in raw
    with EventLog(path) as again:
        dump = json.dumps([e.model_dump() for e in again.events()]) + json.dumps(again.load_history(S))
        dump += json.dumps(again.load_history("s2")) + json.dumps(again.records("r"))
        dump += json.dumps([t.model_dump() for t in again.turns(S)])
        assert secret not in dump
        assert dump.count("[REDACTED]") >= 8
        assert again.events()[2].text == "[REDACTED]"


def test_custom_redaction_callable(log):
    log._redact = lambda s: s.replace("secret", "******")
    for e in stamp([TurnStart(user_message="a secret"), TurnEnd(status="completed", text="secret")]):
        log.append(e)
    (t,) = log.turns(S)
    assert t.user_message == "a ******" and t.text == "******"


# ── durability ───────────────────────────────────────────────────────────────


def test_survives_reopen(tmp_path):
    path = tmp_path / "events.sqlite"
    el = EventLog(path)
    run_turn(el, "t1", "question", "answer")
    el.append_messages(S, "t1", [{"role": "user", "content": "question"}, {"role": "assistant", "content": "answer"}])
    el.add_record("k", {"v": 1}, session_id=S)
    el.close()
    again = EventLog(path)
    assert again.sessions() == [S]
    assert [t.text for t in again.turns(S)] == ["answer"]
    assert again.load_history(S)[-1] == {"role": "assistant", "content": "answer"}
    assert again.records("k")[0]["v"] == 1
    run_turn(again, "t2", "q2", "a2")
    assert [t.index for t in again.turns(S)] == [0, 1]
    again.close()


def test_two_logs_on_one_file_see_each_other(tmp_path):
    path = tmp_path / "events.sqlite"
    a, b = EventLog(path), EventLog(path)
    run_turn(a, "t1", "q", "x")
    assert [t.turn_id for t in b.turns(S)] == ["t1"]
    a.close()
    b.close()


def test_concurrent_appends_from_threads(log):
    n_threads, per = 8, 50
    barrier = threading.Barrier(n_threads)

    def worker(k):
        barrier.wait()
        for i in range(per):
            e = StepStart(step=i)
            e.session_id, e.turn_id, e.seq = S, f"t{k}", i
            log.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(n_threads):
        assert [e.step for e in log.events(turn_id=f"t{k}")] == list(range(per))


def test_step_end_inside_group_commit_window_is_still_written_soon(tmp_path):
    """Two quick step ends share a hand-over; the second is committed by the writer, not by the next step."""
    import time as _time

    path = tmp_path / "events.sqlite"
    el = EventLog(path)
    other = sqlite3.connect(path)
    first, second = stamp([StepEnd(step=1), StepEnd(step=2)])
    second.seq = 1
    el.append(first)  # handed over at once
    el.append(second)  # within GROUP_COMMIT_S of the first: left for the writer to pick up
    deadline = _time.monotonic() + 60  # only a bound on the wait: the assertion below decides
    while _time.monotonic() < deadline:
        if other.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 2:
            break
        threading.Event().wait(0.01)  # not time.sleep: EINVAL under scripts/test.sh's faketime pass
    assert other.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 2
    other.close()
    el.close()
