"""CheckpointStore (snapshots, undo, conflicts, persistence); ``%agent checkpoints / undo``: tests/notebook."""

from __future__ import annotations

import sqlite3
import stat
import threading
from pathlib import Path

import pytest

from jupyter_brain.agent.checkpoints import CheckpointStore, UndoReport, active_store
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.tools import default_tools, write_tools


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.txt").write_text("a0\n")
    (folder / "b.txt").write_text("b0\n")
    return folder


@pytest.fixture
def store(tmp_path: Path):
    cps = CheckpointStore(tmp_path / "cps")
    yield cps
    cps.close()


@pytest.fixture
def tools(ws: Path, store: CheckpointStore) -> dict:
    return {t.name: t for t in write_tools(ws, store)}


# snapshots --------------------------------------------------------------------------------
def test_snapshot_records_previous_content_or_absence(ws: Path, store: CheckpointStore) -> None:
    store.begin_turn("s", "t1")
    (ws / "a.txt").chmod(0o640)
    cp = store.snapshot(ws / "a.txt")
    assert (cp.session_id, cp.turn_id, cp.existed, cp.size, cp.mode, cp.action) == ("s", "t1", True, 3, 0o640, "modified")
    assert store.content(cp) == b"a0\n"
    missing = store.snapshot(ws / "new" / "c.txt")
    assert not missing.existed and missing.sha is None and store.content(missing) is None
    assert missing.action == "created"
    assert [c.path for c in store.list()] == [str(ws / "new" / "c.txt"), str(ws / "a.txt")]


def test_first_snapshot_of_a_path_in_a_turn_wins(ws: Path, tools: dict, store: CheckpointStore) -> None:
    store.begin_turn("s", "t1")
    tools["write_file"]("a.txt", "a1\n")
    tools["write_file"]("a.txt", "a2\n")
    tools["edit_file"]("a.txt", "a2", "a3")
    [cp] = store.list()
    assert store.content(cp) == b"a0\n"
    assert cp.written and cp.after_size == 3
    store.begin_turn("s", "t2")
    tools["write_file"]("a.txt", "a4\n")
    newest = store.list()[0]
    assert newest.turn_id == "t2" and store.content(newest) == b"a3\n"


def test_identical_contents_are_stored_once(ws: Path, store: CheckpointStore) -> None:
    (ws / "b.txt").write_text("a0\n")
    store.begin_turn("s", "t1")
    store.snapshot(ws / "a.txt")
    store.snapshot(ws / "b.txt")
    store.begin_turn("s", "t2")
    store.snapshot(ws / "a.txt")
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 1
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_snapshot_refuses_folders_and_huge_files(ws: Path, tmp_path: Path) -> None:
    cps = CheckpointStore(tmp_path / "small", max_snapshot_bytes=2)
    with pytest.raises(ValueError, match="is a folder"):
        cps.snapshot(ws)
    with pytest.raises(ValueError, match="too large to checkpoint"):
        cps.snapshot(ws / "a.txt")
    cps.close()


def test_writes_before_any_turn_go_to_a_manual_turn(ws: Path, tools: dict, store: CheckpointStore) -> None:
    tools["write_file"]("a.txt", "x")
    [cp] = store.list()
    assert cp.session_id == "default" and cp.turn_id.startswith("manual-")
    assert store.current_turn == ("default", cp.turn_id)
    assert active_store() is store


def test_snapshots_from_many_threads(ws: Path, tools: dict, store: CheckpointStore) -> None:
    store.begin_turn("s", "t1")
    errors = []

    def work(i: int) -> None:
        try:
            tools["write_file"](f"many/f{i}.txt", f"{i}\n")
            tools["edit_file"](f"many/f{i}.txt", f"{i}", f"{i}!")
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.list(limit=100)) == 24
    report = store.undo_last_turn("s")
    assert len(report.deleted) == 24 and not (ws / "many").exists()


# undo ---------------------------------------------------------------------------------------
def test_undo_restores_modified_and_deletes_created(ws: Path, tools: dict, store: CheckpointStore) -> None:
    (ws / "a.txt").chmod(0o755)
    store.begin_turn("s", "t1")
    tools["edit_file"]("a.txt", "a0", "a1")
    tools["write_file"]("deep/er/new.txt", "new\n")
    tools["write_file"]("b.txt", "b1\n")
    report = store.undo_last_turn("s", root=ws)
    assert report.undone and report.ok and report.turn_id == "t1"
    assert report.restored == [str(ws / "b.txt"), str(ws / "a.txt")]  # newest write first
    assert report.deleted == [str(ws / "deep" / "er" / "new.txt")]
    assert (ws / "a.txt").read_text() == "a0\n" and (ws / "b.txt").read_text() == "b0\n"
    assert stat.S_IMODE((ws / "a.txt").stat().st_mode) == 0o755
    assert not (ws / "deep").exists()  # the folders the turn created went too
    assert str(report) == (
        "Undid turn t1 of session 's':\n  restored  b.txt\n  restored  a.txt\n  deleted   deep/er/new.txt"
    )
    assert all(cp.undone for cp in store.list())
    assert store.turns_with_writes("s") == [] and store.turns_with_writes("s", include_undone=True) == ["t1"]


def test_second_undo_goes_one_turn_further_back(ws: Path, tools: dict, store: CheckpointStore) -> None:
    store.begin_turn("s", "t1")
    tools["write_file"]("a.txt", "a1\n")
    store.begin_turn("s", "t-no-writes")
    store.begin_turn("s", "t2")
    tools["write_file"]("a.txt", "a2\n")
    tools["write_file"]("c.txt", "c2\n")
    assert store.turns_with_writes("s") == ["t2", "t1"]
    first = store.undo_last_turn("s")
    assert first.turn_id == "t2" and (ws / "a.txt").read_text() == "a1\n" and not (ws / "c.txt").exists()
    second = store.undo_last_turn("s")
    assert second.turn_id == "t1" and (ws / "a.txt").read_text() == "a0\n"
    third = store.undo_last_turn("s")
    assert third.turn_id is None and not third.undone
    assert str(third) == "Nothing to undo: session 's' has no turns with file writes left."


def test_undo_is_per_session(ws: Path, tools: dict, store: CheckpointStore) -> None:
    store.begin_turn("alpha", "t1")
    tools["write_file"]("a.txt", "alpha\n")
    store.begin_turn("beta", "t2")
    tools["write_file"]("b.txt", "beta\n")
    report = store.undo_last_turn("alpha")
    assert report.turn_id == "t1" and (ws / "a.txt").read_text() == "a0\n"
    assert (ws / "b.txt").read_text() == "beta\n"
    assert [cp.session_id for cp in store.list("beta")] == ["beta"]


def test_user_changes_since_the_write_are_conflicts(ws: Path, tools: dict, store: CheckpointStore) -> None:
    store.begin_turn("s", "t1")
    tools["write_file"]("a.txt", "agent\n")
    tools["write_file"]("b.txt", "agent\n")
    tools["write_file"]("c.txt", "agent\n")
    (ws / "a.txt").write_text("user edit\n")
    (ws / "b.txt").unlink()
    report = store.undo_last_turn("s", root=ws)
    assert not report.undone and report.restored == [] and report.deleted == []
    assert sorted(report.conflicts) == [(str(ws / "a.txt"), "changed since the agent wrote it"),
                                        (str(ws / "b.txt"), "deleted since the agent wrote it")]
    assert (ws / "a.txt").read_text() == "user edit\n" and (ws / "c.txt").read_text() == "agent\n"
    text = str(report)
    assert text.startswith("Nothing was undone for turn t1 of session 's': 2 files changed since the agent wrote them:")
    assert "conflict  a.txt (changed since the agent wrote it)" in text and "--force" in text
    assert store.turns_with_writes("s") == ["t1"]  # still undoable

    forced = store.undo_last_turn("s", force=True, root=ws)
    assert forced.undone and forced.forced
    assert (ws / "a.txt").read_text() == "a0\n" and (ws / "b.txt").read_text() == "b0\n"
    assert forced.deleted == [str(ws / "c.txt")] and not (ws / "c.txt").exists()
    assert "forced    a.txt (overwrote: changed since the agent wrote it)" in str(forced)


def test_a_created_file_the_user_deleted_is_no_conflict(ws: Path, tools: dict, store: CheckpointStore) -> None:
    store.begin_turn("s", "t1")
    tools["write_file"]("c.txt", "agent\n")
    (ws / "c.txt").unlink()
    report = store.undo_last_turn("s")
    assert report.undone and report.unchanged == [str(ws / "c.txt")]


def test_file_already_back_to_its_old_content_is_unchanged(ws: Path, tools: dict, store: CheckpointStore) -> None:
    store.begin_turn("s", "t1")
    tools["write_file"]("a.txt", "agent\n")
    (ws / "a.txt").write_text("a0\n")  # the user reverted it by hand
    report = store.undo_last_turn("s", root=ws)
    assert report.undone and report.unchanged == [str(ws / "a.txt")] and report.conflicts == []
    assert "unchanged a.txt (already as before the turn)" in str(report)


def test_everything_survives_a_new_store_on_the_same_folder(ws: Path, tmp_path: Path) -> None:
    first = CheckpointStore(tmp_path / "cps")
    first.begin_turn("s", "t1")
    tools = {t.name: t for t in write_tools(ws, first)}
    tools["write_file"]("a.txt", "a1\n")
    first.begin_turn("s", "t2")
    tools["write_file"]("new.txt", "n\n")
    first.close()

    second = CheckpointStore(tmp_path / "cps")  # a kernel restart
    assert [cp.turn_id for cp in second.list()] == ["t2", "t1"]
    assert second.undo_last_turn("s").turn_id == "t2" and not (ws / "new.txt").exists()
    second.close()
    third = CheckpointStore(tmp_path / "cps")
    assert third.turns_with_writes("s") == ["t1"]
    assert third.undo_last_turn("s").turn_id == "t1" and (ws / "a.txt").read_text() == "a0\n"
    third.close()


def test_undo_report_errors_are_listed(ws: Path, tools: dict, store: CheckpointStore, monkeypatch) -> None:
    from jupyter_brain.agent.checkpoints import undo

    store.begin_turn("s", "t1")
    tools["write_file"]("a.txt", "a1\n")

    def refuse(path, data, mode=None):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(undo, "atomic_write", refuse)
    report = store.undo_last_turn("s", root=ws)
    assert report.undone and not report.ok
    assert "FAILED    a.txt: Permission denied" in str(report)


def test_undo_report_str_without_root() -> None:
    report = UndoReport("s", "t9", restored=["/x/a.txt"])
    assert str(report) == "Undid turn t9 of session 's':\n  restored  /x/a.txt"


# harness --------------------------------------------------------------------------------------
def test_harness_begins_a_turn_so_writes_belong_to_it(ws: Path, store: CheckpointStore) -> None:
    provider = ScriptedProvider([
        {"text": "", "tool_calls": [{"name": "write_file", "arguments": {"path": "out/report.md", "content": "# R\n"}},
                                    {"name": "edit_file", "arguments": {"path": "a.txt", "old": "a0", "new": "A"}}]},
        "done",
    ])
    registry = AgentToolRegistry(default_tools({}, ws), permission_mode="auto")  # the active store
    harness = AgentHarness(provider, registry, EventLog(), checkpoint_store=store)
    result = harness.run_turn("nb", [], "write a report")
    assert [c.status for c in result.tool_calls] == ["ok", "ok"]
    assert {(cp.session_id, cp.turn_id) for cp in store.list()} == {("nb", result.turn_id)}
    report = store.undo_last_turn("nb")
    assert report.turn_id == result.turn_id
    assert (ws / "a.txt").read_text() == "a0\n" and not (ws / "out").exists()
