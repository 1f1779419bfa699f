"""CheckpointStore opens its database on first use (a turn that writes no file creates
none), and a turn begun before that is still the turn its snapshots belong to."""

from __future__ import annotations

from pathlib import Path

from jupyter_brain.agent.checkpoints import CheckpointStore
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.tools import write_tools


def test_turns_that_write_nothing_create_no_database(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "cps")
    registry = AgentToolRegistry(write_tools(tmp_path, store))
    harness = AgentHarness(ScriptedProvider(["No files needed."]), registry, EventLog(), checkpoint_store=store)
    result = harness.run_turn("s", [], "hello")
    assert result.status == "completed"
    assert store.current_turn == ("s", result.turn_id)
    assert not store.opened and not store.path.exists()
    store.close()  # closing a store that never opened is fine


def test_a_turn_begun_before_the_database_opened_owns_its_snapshots(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a0\n")
    store = CheckpointStore(tmp_path / "cps")
    tools = {t.name: t for t in write_tools(ws, store)}
    store.begin_turn("s", "t1")  # writes nothing
    store.begin_turn("s", "t2")
    assert not store.opened
    tools["write_file"]("a.txt", "a1\n")
    assert store.opened and store.path.exists()
    assert store.turns_with_writes("s") == ["t2"]
    assert [c.turn_id for c in store.list("s")] == ["t2"]
    store.begin_turn("s", "t3")  # the database is open now: the row is written at once
    tools["write_file"]("a.txt", "a2\n")
    assert store.turns_with_writes("s") == ["t3", "t2"]
    assert store.undo_last_turn("s").restored and (ws / "a.txt").read_text() == "a1\n"
    assert store.undo_last_turn("s").restored and (ws / "a.txt").read_text() == "a0\n"
    store.close()


def test_a_reopened_store_reads_what_an_earlier_one_wrote(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    first = CheckpointStore(tmp_path / "cps")
    first.begin_turn("s", "t1")
    {t.name: t for t in write_tools(ws, first)}["write_file"]("new.txt", "x")
    first.close()
    second = CheckpointStore(tmp_path / "cps")
    assert not second.opened
    assert second.turns_with_writes("s") == ["t1"]
    assert second.undo_last_turn("s").deleted and not (ws / "new.txt").exists()
    second.close()
