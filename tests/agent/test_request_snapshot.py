"""The last request of a turn, stored part by part for ``%agent inspect``."""

from __future__ import annotations

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.request_snapshot import snapshot_from_record, snapshot_request
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.foundation.tokens import TokenCounter
from jupyter_brain.providers.scripted import ScriptedProvider

SECRET = "sk-ant-api03-" + "x" * 40


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def test_parts_are_grouped_counted_and_masked():
    counter = TokenCounter()
    request = [
        {"role": "system", "content": "You are helpful."},
        {"role": "system", "content": "recalled fact", "kind": "memory"},
        {"role": "system", "content": f"df: DataFrame, key={SECRET}", "kind": "workspace"},
        {"role": "user", "content": "hello"},
        {"role": "tool", "tool_call_id": "c1", "name": "x", "content": "ok",
         "images": [{"media_type": "image/png", "data": "A" * 5000}]},
    ]
    snap = snapshot_request(request, [lookup.schema()], counter=counter, redact=lambda s: s.replace(SECRET, "***"),
                            session_id="s", turn_id="t", step=2)
    assert [p.kind for p in snap.parts] == ["system", "memory", "workspace", "history"]
    assert SECRET not in snap.model_dump_json()
    assert "5,000 bytes" in snap.parts[-1].messages[1]["images"][0]["data"]
    assert all(p.tokens > 0 for p in snap.parts)
    assert snap.tools[0].name == "lookup" and snap.tools[0].tokens > 0
    assert snap.total_tokens == sum(p.tokens for p in snap.parts) + snap.tools[0].tokens


def test_a_turn_keeps_its_last_request_for_inspection():
    log = EventLog()
    provider = ScriptedProvider([
        {"text": "", "tool_calls": [{"name": "lookup", "arguments": {"key": "a"}}]},
        "the answer",
    ])
    harness = AgentHarness(provider, AgentToolRegistry([lookup]), log, workspace=lambda: "x = 1",
                           secrets=(SECRET,), redact_logs=True, system_prompt=f"key {SECRET}")
    result = harness.run_turn("s1", [], "what is a?")
    snap = result.request_snapshot()
    assert snap.turn_id == result.turn_id and snap.session_id == "s1"
    assert snap.step == 2  # the request that produced the answer
    assert [p.kind for p in snap.parts] == ["system", "workspace", "history"]
    history = snap.parts[-1].messages
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert "value of a" in history[-1]["content"]
    assert SECRET not in snap.model_dump_json()
    assert "request" not in result.model_dump()  # kept beside the result, not in it
    stored = log.records("request")  # written once, when the turn ended (the request_log integration)
    assert len(stored) == 1 and snapshot_from_record(stored[0]) == snap
    assert SECRET not in str(stored)


def test_a_turn_that_sent_nothing_has_no_request():
    import threading

    cancel = threading.Event()
    cancel.set()
    harness = AgentHarness(ScriptedProvider(["never"]), AgentToolRegistry(), EventLog())
    result = harness.run_turn("s", [], "hi", cancel=cancel)
    assert result.status == "interrupted" and result.request_snapshot() is None
