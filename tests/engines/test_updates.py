"""The mapping from ACP session updates to our events, on its own (no agent): what the
views and the replay rely on (issue #36)."""

from __future__ import annotations

from pathlib import Path

from jupyter_brain.engines.updates import UpdateMapper, diff_text, plan_text


def chunk(kind: str, text: str) -> dict:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def test_text_thinking_and_a_tool_call_become_events_and_records():
    m = UpdateMapper()
    events = [e for u in [
        chunk("agent_thought_chunk", "plan it"),
        chunk("agent_message_chunk", "Reading."),
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read File", "kind": "read", "status": "pending"},
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read a.txt", "kind": "read",
         "rawInput": {"file_path": "a.txt"}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
         "content": [{"type": "content", "content": {"type": "text", "text": "hello"}}]},
        chunk("agent_message_chunk", "It says hello."),
    ] for e in m.map(u)]
    assert [e.type for e in events] == ["thinking_delta", "thinking_end", "text_delta", "tool_call_start",
                                       "tool_call_args", "tool_call_end", "text_delta"]
    assert m.text == "Reading.\n\nIt says hello."  # text after a tool call is a new paragraph
    (call,) = m.records()
    assert (call.name, call.status, call.output, call.arguments) == ("Read File", "ok", "hello", {"file_path": "a.txt"})


def test_an_edit_shows_as_a_diff_and_a_failure_as_an_error():
    m = UpdateMapper()
    diff = {"type": "diff", "path": "/w/a.txt", "oldText": "hello\n", "newText": "goodbye\n"}
    m.map({"sessionUpdate": "tool_call", "toolCallId": "e", "title": "Edit", "kind": "edit", "content": [diff]})
    (end,) = m.map({"sessionUpdate": "tool_call_update", "toolCallId": "e", "status": "completed"})
    assert end.outputs[0]["data"].startswith("```diff\n--- a/w/a.txt\n+++ b/w/a.txt")
    assert "-hello" in end.outputs[0]["data"] and "+goodbye" in end.outputs[0]["data"]
    m.map({"sessionUpdate": "tool_call", "toolCallId": "x", "title": "Bash", "kind": "execute"})
    (failed,) = m.map({"sessionUpdate": "tool_call_update", "toolCallId": "x", "status": "failed", "rawOutput": "boom"})
    assert failed.status == "error" and failed.error == "boom"


def test_a_plan_is_a_plan_step_and_open_calls_are_closed_at_the_end():
    m = UpdateMapper()
    (step,) = m.map({"sessionUpdate": "plan", "entries": [
        {"content": "load", "status": "completed", "priority": "high"},
        {"content": "plot", "status": "in_progress", "priority": "medium"},
        {"content": "report", "status": "pending", "priority": "low"}]})
    assert step.data == {"kind": "thought", "label": "Plan", "text": "☑ load\n▸ plot\n☐ report"}
    m.map({"sessionUpdate": "tool_call", "toolCallId": "slow", "title": "Bash"})
    (closed,) = m.unfinished()
    assert closed.status == "interrupted" and m.records()[0].status == "interrupted"
    assert m.map({"sessionUpdate": "available_commands_update", "availableCommands": []}) == []


def test_diff_of_a_new_file_and_plan_text():
    assert diff_text({"type": "diff", "path": "n.txt", "newText": "x\n"}).startswith("--- /dev/null\n+++ b/n.txt")
    assert diff_text({"type": "content"}) == ""
    assert plan_text([]) == ""


def test_a_key_in_what_the_agent_sends_is_masked_in_the_events_and_the_recording():
    from jupyter_brain.engines import EngineHost, EngineRecording, EngineSpec, EngineTurn

    key = "sk-ant-" + "a" * 30
    recorded = EngineRecording(engine="x", prompt="p", stop_reason="end_turn", items=[
        {"kind": "update", "update": {"sessionUpdate": "agent_message_chunk",
                                      "content": {"type": "text", "text": f"the key is {key}"}}}])
    events: list = []
    outcome = EngineHost(Path(".")).run(EngineTurn(spec=EngineSpec("x", ("x",)), prompt="p", session="s",
                                                   on_event=events.append, replay=recorded))
    assert key not in str([e.model_dump() for e in events]) and "[REDACTED]" in outcome.result.text
