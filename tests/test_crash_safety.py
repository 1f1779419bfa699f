"""A kernel killed mid-turn (SIGKILL: no atexit, no flush) loses at most the step in flight.

A child process runs a session on a data dir: one complete turn, then a multi-step turn
with the scripted provider. The parent waits until step k is committed to SQLite (it
polls the database), kills the child during a tool or while text streams, and then
checks that the log opens, the turns and events are readable, ``SessionManager.use``
restores the history up to the last completed step — repaired so it is valid for the
next API call — and that a new turn runs on it.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.history import history_problems, signatures
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.session import CUT_OFF_NOTE, SessionManager, _cut_off_repair

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")

SESSION = "crash"

CHILD = r'''
import sys, time
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.session import SessionManager

data_dir, mode = sys.argv[1], sys.argv[2]


@tool(tool_timeout_s=600)
def lookup(key: str) -> str:
    """Look a key up."""
    if key == "slow":
        print("TOOL_RUNNING", flush=True)
        time.sleep(600)
    return f"value of {key}"


def call(key, n):
    return {"name": "lookup", "arguments": {"key": key}, "id": f"call_{n}"}


manager = SessionManager(data_dir)
session = manager.use("crash")
session.run("hi", AgentHarness(ScriptedProvider(["Hello, ready."]), AgentToolRegistry([lookup]), manager.event_log))
print("TURN1_DONE", flush=True)

script = [
    {"text": "Looking up a.", "thinking": [{"text": "plan a", "signature": "sig-a"}], "tool_calls": [call("a", 1)]},
    {"text": "Looking up b and c.", "tool_calls": [call("b", 2), call("c", 3)]},
    {"text": "Now the slow one.", "tool_calls": [call("slow" if mode == "tool" else "d", 4)]},
    {"text": "word " * 4000},
]
harness = AgentHarness(ScriptedProvider(script, delay_s=0.004), AgentToolRegistry([lookup]), manager.event_log,
                       stream=True, max_steps=10, timeout_s=600)
streaming = False


def on_event(e):
    global streaming
    if e.type == "step_end":
        print(f"STEP_END {e.step}", flush=True)
    elif e.type == "text_delta" and e.step == 4 and not streaming:
        streaming = True
        print("STREAMING", flush=True)


session.run("do the work", harness, on_event=on_event)
print("DONE", flush=True)
'''


def _thinking(text: str, sig: str) -> list[dict[str, Any]]:
    return [{"text": text, "signature": sig}]


def _call(key: str, n: int) -> dict[str, Any]:
    return {"id": f"call_{n}", "name": "lookup", "arguments": {"key": key}}


def _result(key: str, n: int) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"call_{n}", "name": "lookup", "content": f"value of {key}", "is_error": False}


def expected_history(mode: str) -> tuple[list[dict[str, Any]], list[int]]:
    """The full history the child would write, and the lengths at each step boundary."""
    third = "slow" if mode == "tool" else "d"
    turn1 = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello, ready."}]
    steps = [
        [{"role": "user", "content": "do the work"},
         {"role": "assistant", "content": "Looking up a.", "thinking": _thinking("plan a", "sig-a"),
          "tool_calls": [_call("a", 1)]}, _result("a", 1)],
        [{"role": "assistant", "content": "Looking up b and c.", "tool_calls": [_call("b", 2), _call("c", 3)]},
         _result("b", 2), _result("c", 3)],
        [{"role": "assistant", "content": "Now the slow one.", "tool_calls": [_call(third, 4)]}, _result(third, 4)],
    ]
    full, bounds = list(turn1), [len(turn1)]
    for step in steps:
        full += step
        bounds.append(len(full))
    return full, bounds


class Child:
    """The child process, its output lines in a queue."""

    def __init__(self, data_dir: Path, mode: str) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
            env.pop(var, None)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(data_dir), mode],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            self.lines.put(line.strip())
        self.lines.put("<EOF>")

    def wait_for(self, marker: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                line = "<TIMEOUT>"
            if line == marker:
                return
            if line in ("<EOF>", "<TIMEOUT>"):
                self.proc.kill()
                err = self.proc.stderr.read() if self.proc.stderr else ""  # type: ignore[union-attr]
                raise AssertionError(f"child never printed {marker!r} ({line}); stderr:\n{err[-3000:]}")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()  # SIGKILL always ends it
        assert self.proc.returncode == -signal.SIGKILL


def committed_steps(db: Path) -> int:
    """The last step of the second turn whose StepEnd is committed (read-only peek)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        rows = con.execute(
            "SELECT e.data FROM events e JOIN turns t ON e.turn_id = t.turn_id"
            " WHERE t.session_id = ? AND t.idx = 1 AND e.type = 'step_end'", (SESSION,)
        ).fetchall()
    except sqlite3.OperationalError:  # the tables do not exist yet
        return 0
    finally:
        con.close()
    return max((json.loads(r[0])["step"] for r in rows), default=0)


def wait_committed(db: Path, step: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while committed_steps(db) < step:
        assert time.monotonic() < deadline, f"step {step} was never committed"
        time.sleep(0.01)


def check_restored(data_dir: Path, mode: str, completed_step: int | None) -> None:
    """Everything the parent can check after the kill; ``None``: the step is not known."""
    db = data_dir / "events.sqlite"
    full, bounds = expected_history(mode)

    # The log opens, its turns and events are readable.
    log = EventLog(db)
    turns = log.turns(SESSION)
    assert [t.status for t in turns[:1]] == ["completed"]
    assert log.records("decision") == []
    if len(turns) == 2:
        assert turns[1].ended is None and turns[1].user_message == "do the work"
        events = log.events(turn_id=turns[1].turn_id)
        types = [e.type for e in events]
        assert types[0] == "turn_start" and "turn_end" not in types
        ended = [e.step for e in events if e.type == "step_end"]
        assert ended == list(range(1, len(ended) + 1))
        if completed_step is not None:
            assert ended[-1] >= completed_step
    raw = log.load_history(SESSION)
    log.close()

    # The session comes back up to its last committed step, valid for the next call.
    manager = SessionManager(data_dir)
    session = manager.use(SESSION)
    history = session.history
    assert history_problems(history, require_final_assistant=True) == []
    cut = history[:-1] if history and history[-1].get("content") == CUT_OFF_NOTE else history
    assert cut == raw
    assert len(cut) in bounds and cut == full[: len(cut)], "not a step boundary of the turn"
    assert (cut != history) == (len(cut) > bounds[0]), "the cut-off note belongs to a cut-off turn only"
    if completed_step is not None:
        assert len(cut) == bounds[completed_step], (len(cut), bounds)
    if len(cut) > bounds[0]:
        assert ("plan a", "sig-a") in signatures(history)  # signed thinking survives untouched

    # A new turn runs on it; the repair was written to the log with it.
    provider = ScriptedProvider(["Continuing from where we were."])
    result = session.run("continue", AgentHarness(provider, AgentToolRegistry([]), manager.event_log))
    assert result.status == "completed" and result.text == "Continuing from where we were."
    sent = [m for m in provider.calls[0]["messages"] if m["role"] != "system"]
    assert sent == [*history, {"role": "user", "content": "continue"}]
    assert history_problems(result.messages, require_final_assistant=True) == []
    assert manager.event_log.load_history(SESSION) == session.history
    manager.event_log.close()

    # Reopened once more: the same history, repaired only once.
    again = SessionManager(data_dir)
    assert again.use(SESSION).history == result.messages
    again.event_log.close()


@pytest.mark.parametrize(
    ("mode", "marker", "step"),
    [
        ("tool", "TOOL_RUNNING", 2),  # killed while step 3's tool runs
        ("stream", "STREAMING", 3),  # killed while step 4's answer streams
    ],
)
def test_kill_mid_turn_restores_the_last_completed_step(tmp_path: Path, mode: str, marker: str, step: int) -> None:
    child = Child(tmp_path, mode)
    child.wait_for(marker)
    wait_committed(tmp_path / "events.sqlite", step)
    child.kill()
    check_restored(tmp_path, mode, step)


def test_kill_right_after_a_step_end_leaves_a_consistent_log(tmp_path: Path) -> None:
    """No waiting for the commit: whatever made it to disk is a valid, whole-step history."""
    child = Child(tmp_path, "stream")
    child.wait_for("STEP_END 1")
    child.kill()
    check_restored(tmp_path, "stream", None)


def test_cut_off_repair_closes_dangling_calls_and_adds_a_note() -> None:
    calls = [_call("a", 1), _call("b", 2)]
    history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": calls},
               _result("a", 1)]
    added = _cut_off_repair(history)
    assert [m["role"] for m in added] == ["tool", "assistant"]
    assert added[0]["tool_call_id"] == "call_2" and added[0]["is_error"]
    assert history_problems(history + added, require_final_assistant=True) == []
    assert _cut_off_repair([{"role": "user", "content": "q"}]) == [{"role": "assistant", "content": CUT_OFF_NOTE}]
    complete = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    assert _cut_off_repair(complete) == [] and _cut_off_repair([]) == []


def test_restore_repairs_in_process_cut_history(tmp_path: Path) -> None:
    """The same repair without a subprocess: a log whose last turn stops after a tool step."""

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    manager = SessionManager(tmp_path)
    session = manager.use(SESSION)
    harness = AgentHarness(ScriptedProvider([{"text": "", "tool_calls": [{"name": "lookup", "arguments": {"key": "a"}, "id": "c1"}]}]),
                           AgentToolRegistry([lookup]), manager.event_log, max_steps=1)
    harness.run_turn(SESSION, [], "q")  # ends at the step limit: a note closes it
    raw = manager.event_log.load_history(SESSION)
    assert history_problems(raw, require_final_assistant=True) == []
    # Simulate the crash: drop the rows written after the last step (the turn's end).
    manager.event_log.replace_history(SESSION, raw[:-1])
    manager.event_log.close()
    restored = SessionManager(tmp_path).use(SESSION)
    assert restored.history[-1]["content"] == CUT_OFF_NOTE
    assert history_problems(restored.history, require_final_assistant=True) == []
    restored.event_log.close()
