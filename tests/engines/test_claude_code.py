"""The ACP host against the real claude-code-acp (pinned in tests/engines/npm), its model a
scripted local Messages server: the updates become our events, permissions follow the
permission mode, file edits are diffs, the kernel is reached over MCP, a recording replays
with no agent installed, and Ctrl-C cancels the turn (issue #36)."""

from __future__ import annotations

import pytest

from jupyter_brain.engines import EngineHost, EngineNotFound, EngineTurn, engine_spec

from .conftest import agent_bin, agent_env
from .scripted_claude import text, thinking, tool_use

pytestmark = pytest.mark.timeout(240)


@pytest.fixture()
def host(claude, agent_home, tmp_path, monkeypatch):
    agent_bin()
    env = agent_env(claude.url, agent_home)
    monkeypatch.setenv("PATH", env["PATH"])  # the named engine is found on PATH
    workspace = tmp_path / "work"
    workspace.mkdir()
    h = EngineHost(workspace, env=env)
    yield h
    h.close()


def turn(prompt: str, events: list, **kw) -> EngineTurn:
    return EngineTurn(spec=engine_spec("claude-code"), prompt=prompt, session="s", on_event=events.append,
                      timeout_s=180, **kw)


def types(events: list) -> list[str]:
    return [e.type for e in events]


def test_a_streamed_answer_with_thinking(host, claude):
    claude.push([thinking("Greet them."), text("Hello from the scripted model.")])
    events: list = []
    outcome = host.run(turn("say hello", events))
    result = outcome.result
    assert result.status == "completed"
    assert result.text == "Hello from the scripted model."
    deltas = [e.text for e in events if e.type == "text_delta"]
    assert len(deltas) > 1 and "".join(deltas) == result.text  # streamed, not one block
    assert "".join(e.text for e in events if e.type == "thinking_delta") == "Greet them."
    assert types(events)[0] == "turn_start" and types(events)[-1] == "turn_end"
    assert outcome.recording.stop_reason == "end_turn"
    assert outcome.caps_note == ""


def test_a_tool_call_on_the_timeline_and_the_session_continues(host, claude):
    notes = host.workspace / "notes.txt"
    notes.write_text("the answer is 42\n")
    claude.push([text("Reading."), tool_use("mcp__acp__Read", {"file_path": str(notes)}, "toolu_r1")],
                [text("It says 42.")])
    events: list = []
    result = host.run(turn("what do the notes say?", events)).result
    assert result.status == "completed", result.error
    (call,) = result.tool_calls
    assert call.status == "ok" and "42" in call.output and call.arguments == {"file_path": str(notes)}
    start = next(e for e in events if e.type == "tool_call_start")
    end = next(e for e in events if e.type == "tool_call_end")
    assert start.call_id == end.call_id == "toolu_r1" and "42" in end.result_preview
    # the next cell continues the agent's session: its request carries the first turn
    claude.push([text("Still 42.")])
    second = host.run(turn("and again?", [])).result
    assert second.text == "Still 42."
    last = claude.main_requests()[-1]["body"]["messages"]
    assert "what do the notes say?" in str(last) and "and again?" in str(last)


def test_rerunning_the_last_cell_replaces_its_turn_in_the_agents_session(host, claude):
    claude.push([text("First answer.")], [text("Second answer.")])
    host.run(turn("question one", [], cell_id="cell-1"))
    host.run(turn("question two", [], cell_id="cell-2"))
    claude.push([text("Second answer, again.")])
    rerun = host.run(turn("question two, edited", [], cell_id="cell-2")).result
    assert rerun.text == "Second answer, again."
    sent = str(claude.main_requests()[-1]["body"]["messages"])
    assert "question one" in sent and "First answer." in sent  # the cells before it stay
    assert "question two" not in sent.replace("question two, edited", "")  # its earlier turn is gone
    assert "Second answer." not in sent


def _edit_script(claude, path):
    claude.push([tool_use("mcp__acp__Read", {"file_path": str(path)}, "toolu_e1")],
                [tool_use("mcp__acp__Edit", {"file_path": str(path), "old_string": "hello",
                                             "new_string": "goodbye"}, "toolu_e2")],
                [text("Done.")])


def test_a_file_edit_is_a_diff_and_auto_allows_it(host, claude):
    path = host.workspace / "a.txt"
    path.write_text("hello\n")
    _edit_script(claude, path)
    events: list = []
    result = host.run(turn("edit it", events, permission="auto")).result
    assert result.status == "completed", result.error
    assert path.read_text() == "goodbye\n"  # written through fs/write_text_file
    edit = next(e for e in events if e.type == "tool_call_end" and e.call_id == "toolu_e2")
    assert edit.status == "ok"
    (diff,) = edit.outputs
    assert diff["mime_type"] == "text/markdown" and "-hello" in diff["data"] and "+goodbye" in diff["data"]
    assert not [e for e in events if e.type == "approval_request"]  # auto: no card


def test_read_only_denies_the_edit(host, claude):
    path = host.workspace / "a.txt"
    path.write_text("hello\n")
    _edit_script(claude, path)
    events: list = []
    result = host.run(turn("edit it", events, permission="read-only")).result
    assert path.read_text() == "hello\n"
    edit = next(c for c in result.tool_calls if c.call_id == "toolu_e2")
    assert edit.status != "ok"


def test_ask_shows_the_card_and_the_approver_decides(host, claude):
    path = host.workspace / "a.txt"
    path.write_text("hello\n")
    _edit_script(claude, path)
    asked: list = []

    def approver(call, spec, arguments):
        asked.append((call.id, spec.effect, arguments))
        return True

    events: list = []
    result = host.run(turn("edit it", events, permission="ask", approver=approver)).result
    assert result.status == "completed", result.error
    assert [a[0] for a in asked] == ["toolu_e2"] and asked[0][1] == "write"  # one card: the write follows it
    request = next(e for e in events if e.type == "approval_request")
    assert "+goodbye" in request.preview["diff"]
    assert path.read_text() == "goodbye\n"


def test_the_kernel_through_mcp(host, claude):
    ran: list = []

    def kernel_tool(name, arguments):
        ran.append((name, arguments))
        return ("x = 41 + 1" if name == "execute_code" else "x: int"), False

    claude.push([tool_use("mcp__jupyter-kernel__execute_code", {"code": "x = 41 + 1"}, "toolu_k1")],
                [text("x is set.")])
    events: list = []
    outcome = host.run(turn("set x", events, permission="auto", kernel_tool=kernel_tool))
    assert outcome.result.status == "completed", outcome.result.error
    assert ran == [("execute_code", {"code": "x = 41 + 1"})]
    offered = [t["name"] for t in claude.main_requests()[0]["body"]["tools"]]
    assert "mcp__jupyter-kernel__execute_code" in offered and "mcp__jupyter-kernel__list_variables" in offered
    assert {"kind": "kernel", "tool": "execute_code", "arguments": {"code": "x = 41 + 1"}} in outcome.recording.items


def test_replay_in_another_folder_with_no_agent(host, claude, tmp_path, monkeypatch):
    path = host.workspace / "a.txt"
    path.write_text("hello\n")
    _edit_script(claude, path)
    live_events: list = []
    live = host.run(turn("edit it", live_events, permission="auto"))
    recording = live.recording
    # another machine: no agent on PATH, no model server, a fresh host
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    claude.stop()
    path.write_text("hello\n")
    with pytest.raises(EngineNotFound, match="npm install -g @zed-industries/claude-code-acp"):
        EngineHost(tmp_path).run(turn("edit it", []))
    events: list = []
    replayed = EngineHost(tmp_path).run(turn("edit it", events, replay=recording)).result
    assert replayed.replay == "replayed" and replayed.text == live.result.text
    assert [(e.type, getattr(e, "call_id", "")) for e in events if e.type.startswith("tool_call")] == \
           [(e.type, getattr(e, "call_id", "")) for e in live_events if e.type.startswith("tool_call")]
    assert path.read_text() == "goodbye\n"  # the write is made again


def test_ctrl_c_mid_turn_cancels(host, claude):
    claude.hold = True
    claude.push([text("This answer is cut off here.")])
    events: list = []

    def interrupt(event):
        events.append(event)
        if event.type == "text_delta" and claude.holding.is_set():
            raise KeyboardInterrupt

    result = host.run(EngineTurn(spec=engine_spec("claude-code"), prompt="talk", session="s",
                                 on_event=interrupt, timeout_s=180)).result
    claude.release.set()
    assert result.status == "interrupted"
    assert types(events)[-1] == "turn_end"
    # the session stays usable
    claude.hold = False
    claude.push([text("Back.")])
    assert host.run(turn("again", [])).result.text == "Back."


def test_the_timeout_cancels_and_caps_without_usage_say_so(host, claude):
    claude.hold = True
    claude.push([text("This answer never ends in time.")])
    events: list = []
    outcome = host.run(EngineTurn(spec=engine_spec("claude-code"), prompt="talk", session="s", on_event=events.append,
                                  timeout_s=3, max_cost=0.5))
    claude.release.set()
    assert outcome.result.status == "timeout"
    assert "reports no usage" in outcome.caps_note and "--max-cost could cap" in outcome.caps_note
    assert types(events)[-1] == "turn_end"
