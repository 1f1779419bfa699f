"""SQLiteDecisionStore: its table in the event log's database, queries, DataFrames."""

from __future__ import annotations

import sys

import pytest

from jupyter_brain.agent.decisions import (
    DecisionRecords,
    RuntimeDecisionRecord,
    RuntimeDecisionStore,
    SQLiteDecisionStore,
    default_decision_store,
)
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.redact import Redactor


def rec(session: str, turn: str, **fields) -> RuntimeDecisionRecord:
    return RuntimeDecisionRecord(session_id=session, turn_id=turn, **fields)


@pytest.fixture()
def log():
    with EventLog(":memory:") as event_log:
        yield event_log


def test_queries_by_session_kind_and_latest(log):
    store = SQLiteDecisionStore(log)
    assert isinstance(store, RuntimeDecisionStore)
    for i in range(5):
        store.record(rec("a" if i % 2 == 0 else "b", f"t{i}", steps=i))
    store.record(rec("a", "c1", kind="compare_best", strategy="cot"))
    assert [r.turn_id for r in store.records()] == ["t0", "t1", "t2", "t3", "t4", "c1"]
    assert [r.turn_id for r in store.records("a")] == ["t0", "t2", "t4", "c1"]
    assert [r.turn_id for r in store.records(kind="compare_best")] == ["c1"]
    assert [r.turn_id for r in store.records("a", kind="turn")] == ["t0", "t2", "t4"]
    latest = store.latest(2)
    assert isinstance(latest, DecisionRecords) and [r.turn_id for r in latest] == ["t4", "c1"]  # oldest first
    assert [r.turn_id for r in store.latest(2, session_id="b")] == ["t1", "t3"]
    assert store.latest(0) == []
    assert store.records()[3].steps == 3
    with pytest.raises(ValueError, match="zero or more"):
        store.records(limit=-1)


def test_to_dataframe(log):
    store = SQLiteDecisionStore(log)
    store.record(rec("s", "t1", provider="anthropic", model="claude", tools_offered=["a", "b"], tools_used=["a"],
                     cost_usd=0.01, prompt={"prompt_id": "p"}))
    store.record(rec("s", "t2", status="max_steps"))
    frame = store.records().to_dataframe()
    assert list(frame.columns) == list(RuntimeDecisionRecord.model_fields)
    assert list(frame["turn_id"]) == ["t1", "t2"]
    assert frame.loc[0, "tools_used"] == ["a"] and frame.loc[0, "prompt"] == {"prompt_id": "p"}
    assert str(frame["created"].dtype).startswith("datetime64")
    assert list(store.to_dataframe(kind="turn")["status"]) == ["", "max_steps"]
    assert len(DecisionRecords().to_dataframe()) == 0


def test_to_dataframe_without_pandas_says_so(log, monkeypatch):
    store = SQLiteDecisionStore(log)
    store.record(rec("s", "t"))
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    with pytest.raises(ImportError, match="needs pandas: pip install pandas"):
        store.records().to_dataframe()


def test_records_outlive_the_log_and_share_its_file(tmp_path):
    path = tmp_path / "events.sqlite"
    with EventLog(path) as first:
        SQLiteDecisionStore(first).record(rec("s", "t1"))
    with EventLog(path) as second:
        assert [r.turn_id for r in SQLiteDecisionStore(second).records()] == ["t1"]
    own = SQLiteDecisionStore(path)  # a path: its own connection to the same database
    own.record(rec("s", "t2"))
    with EventLog(path) as third:
        assert [r.turn_id for r in SQLiteDecisionStore(third).records()] == ["t1", "t2"]


def test_the_logs_masking_applies(log):
    key = "sk-ant-api03-" + "y" * 30
    log._redact = Redactor([key])
    store = SQLiteDecisionStore(log)
    store.record(rec("s", "t", stop_reason=f"error: key {key}", run_context={"token": key}))
    (record,) = store.records()
    assert key not in record.model_dump_json() and "[REDACTED]" in record.stop_reason


def test_default_store_is_one_per_log_and_none_when_the_log_is_closed(tmp_path):
    log = EventLog(":memory:")
    assert default_decision_store(log) is default_decision_store(log)
    other = EventLog(":memory:")
    assert default_decision_store(other) is not default_decision_store(log)
    other.close()
    closed = EventLog(tmp_path / "x.sqlite")
    closed.close()
    assert default_decision_store(closed) is None
    log.close()
