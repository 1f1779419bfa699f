"""write_file / edit_file: containment, checkpoints, atomic writes, previews and permission gates."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from jupyter_brain.agent.checkpoints import CheckpointStore
from jupyter_brain.agent.executor import Approval, BoundedToolExecutor, ToolTurnState
from jupyter_brain.agent.tools import AgentToolRegistry, ToolError
from jupyter_brain.providers.base import ToolCall
from jupyter_brain.tools import default_tools, write_tools
from jupyter_brain.tools import write as write_module


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("TOP SECRET\n")
    return folder


@pytest.fixture
def root(tmp_path: Path, outside: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (ws / "notes.md").write_text("# Notes\nalpha\nbeta\ngamma\n")
    (ws / "link_out").symlink_to(outside, target_is_directory=True)
    (ws / "secret_link.txt").symlink_to(outside / "secret.txt")
    (ws / "link_in").symlink_to(ws / "data", target_is_directory=True)
    return ws


@pytest.fixture
def store(tmp_path: Path):
    cps = CheckpointStore(tmp_path / "cps")
    cps.begin_turn("s1", "t1")
    yield cps
    cps.close()


@pytest.fixture
def tools(root: Path, store: CheckpointStore) -> dict:
    return {spec.name: spec for spec in write_tools(root, store)}


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


# write_file -----------------------------------------------------------------------------
def test_write_file_creates_parent_folders_and_confirms(root: Path, tools: dict, store: CheckpointStore) -> None:
    out = tools["write_file"]("reports/q1/summary.md", "# Q1\nup 10%\n")
    assert (root / "reports" / "q1" / "summary.md").read_text() == "# Q1\nup 10%\n"
    assert out == "Created reports/q1/summary.md (2 lines, 12 B; +2 \u22120 lines)."
    [cp] = store.list()
    assert cp.action == "created" and not cp.existed and cp.written
    assert cp.path == str(root / "reports" / "q1" / "summary.md")
    assert _leftovers(root) == []


def test_write_file_overwrites_with_checkpoint_of_the_old_content(root: Path, tools: dict, store: CheckpointStore) -> None:
    out = tools["write_file"]("notes.md", "# Notes\nalpha\nBETA\ngamma\n")
    assert out.startswith("Overwrote notes.md (4 lines, 25 B; +1 \u22121 lines; changed: line 3)")
    [cp] = store.list()
    assert cp.action == "modified"
    assert store.content(cp) == b"# Notes\nalpha\nbeta\ngamma\n"


def test_write_file_overwrite_false_refuses_existing(root: Path, tools: dict, store: CheckpointStore) -> None:
    with pytest.raises(ToolError, match="notes.md already exists; pass overwrite=true"):
        tools["write_file"]("notes.md", "x", overwrite=False)
    assert (root / "notes.md").read_text().startswith("# Notes")
    assert store.list() == []
    tools["write_file"]("fresh.txt", "x", overwrite=False)
    assert (root / "fresh.txt").read_text() == "x"


def test_write_file_same_content_is_no_change(root: Path, tools: dict, store: CheckpointStore) -> None:
    out = tools["write_file"]("notes.md", (root / "notes.md").read_text())
    assert out == "No change: notes.md already has this content."
    assert store.list() == []


def test_write_file_keeps_the_file_mode(root: Path, tools: dict) -> None:
    script = root / "run.sh"
    script.write_text("echo hi\n")
    script.chmod(0o750)
    tools["write_file"]("run.sh", "echo bye\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    tools["write_file"]("new.txt", "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((root / "new.txt").stat().st_mode) == 0o666 & ~umask


def test_write_through_an_inside_symlink_keeps_the_link(root: Path, tools: dict) -> None:
    (root / "data" / "real.txt").write_text("old\n")
    (root / "alias.txt").symlink_to(root / "data" / "real.txt")
    out = tools["write_file"]("alias.txt", "new\n")
    assert "data/real.txt" in out
    assert (root / "alias.txt").is_symlink()
    assert (root / "data" / "real.txt").read_text() == "new\n"
    tools["write_file"]("link_in/via_link.txt", "hi")
    assert (root / "data" / "via_link.txt").read_text() == "hi"


def test_failed_replace_leaves_the_old_file_and_no_temp_file(root: Path, tools: dict,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(ToolError, match="cannot write notes.md: No space left on device"):
        tools["write_file"]("notes.md", "new")
    assert (root / "notes.md").read_text().startswith("# Notes")
    assert _leftovers(root) == [] and not any(p.name.startswith(".notes.md.") for p in root.iterdir())


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("../outside/new.txt", "'..'"),
        ("/etc/cron.d/x", "absolute path"),
        ("link_out/new.txt", "symlink"),  # a symlinked parent folder pointing out
        ("link_out/deeper/new.txt", "symlink"),
        ("secret_link.txt", "symlink"),
        ("%2e%2e/outside/x", "percent-encoded"),
        ("..\\outside\\x", "backslash"),
        ("C:/x.txt", "drive letter"),
        ("~/x.txt", "'~'"),
        ("\uff0e\uff0e/outside/x", "look-alike"),
        ("a\x00.txt", "NUL"),
        ("x" * 300 + ".txt", "too long"),
        (".git/config", "files under .git/"),
        ("sub/.git/hooks/pre-commit", "files under .git/"),
        (".jupyter_brain/events.sqlite", "files under .jupyter_brain/"),
        ("data", "is a folder"),
        ("", "not the workspace root"),
        (".", "not the workspace root"),
        ("notes.md/inner.txt", "notes.md is a file, not a folder"),
    ],
)
def test_write_file_refuses_unsafe_targets(root: Path, outside: Path, tools: dict, store: CheckpointStore,
                                           path: str, needle: str) -> None:
    before = sorted(p.name for p in outside.iterdir())
    with pytest.raises(ToolError) as info:
        tools["write_file"](path, "pwned")
    assert needle in str(info.value)
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "secret.txt").read_text() == "TOP SECRET\n"
    assert store.list() == []


def test_write_refuses_the_checkpoint_store_itself(tmp_path: Path) -> None:
    ws = tmp_path / "proj"
    ws.mkdir()
    cps = CheckpointStore(ws / "brain" / "checkpoints")
    tools = {t.name: t for t in write_tools(ws, cps)}
    with pytest.raises(ToolError, match="inside the checkpoint store"):
        tools["write_file"]("brain/checkpoints/checkpoints.sqlite", "x")
    cps.close()


def test_refuses_binary_and_oversized_files(root: Path, tools: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    (root / "table.parquet").write_bytes(b"PAR1\x00\x01binary")
    with pytest.raises(ToolError, match="table.parquet is a binary file .*run_python"):
        tools["write_file"]("table.parquet", "text")
    with pytest.raises(ToolError, match="binary file"):
        tools["edit_file"]("table.parquet", "PAR1", "X")
    with pytest.raises(ToolError, match="NUL characters"):
        tools["write_file"]("nul.txt", "a\x00b")
    monkeypatch.setattr(write_module, "MAX_WRITE_BYTES", 100)
    (root / "big.txt").write_text("x" * 200)
    with pytest.raises(ToolError, match="big.txt is 200 B; these tools change files up to 100 B"):
        tools["write_file"]("big.txt", "small")
    with pytest.raises(ToolError, match="the new content is 101 B"):
        tools["write_file"]("new.txt", "y" * 101)
    assert not (root / "new.txt").exists()


def test_refuses_special_files(root: Path, tools: dict) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        tools["write_file"]("pipe", "x")


# edit_file ------------------------------------------------------------------------------
def test_edit_file_replaces_exact_text(root: Path, tools: dict, store: CheckpointStore) -> None:
    out = tools["edit_file"]("notes.md", "beta\n", "beta\nbeta2\n")
    assert (root / "notes.md").read_text() == "# Notes\nalpha\nbeta\nbeta2\ngamma\n"
    assert out == "Edited notes.md: replaced 1 occurrence (5 lines, 31 B; +1 \u22120 lines; changed: line 4)."
    assert store.content(store.list()[0]) == b"# Notes\nalpha\nbeta\ngamma\n"


def test_edit_file_not_found_shows_the_closest_lines(root: Path, tools: dict) -> None:
    with pytest.raises(ToolError) as info:
        tools["edit_file"]("notes.md", "betta", "b")
    message = str(info.value)
    assert message.startswith("old text not found in notes.md. The closest text is near line 3:")
    assert "     3\tbeta" in message and "     2\talpha" in message
    assert message.endswith("Read the file with read_file and copy the exact text into old.")
    with pytest.raises(ToolError, match="different whitespace"):
        tools["edit_file"]("notes.md", "alpha   beta", "x")
    with pytest.raises(ToolError, match="Nothing similar either"):
        tools["edit_file"]("notes.md", "zzzzqqqq", "x")


def test_edit_file_too_many_matches_lists_them(root: Path, tools: dict) -> None:
    (root / "calc.py").write_text("x = 1\ny = x + 1\nz = x + 1\nw = x + 1\n")
    with pytest.raises(ToolError) as info:
        tools["edit_file"]("calc.py", "x + 1", "x + 2")
    message = str(info.value)
    assert "found 3 times in calc.py (lines 2, 3, 4), but count allows it once" in message
    assert "     2\ty = x + 1" in message and "pass count=3" in message
    assert (root / "calc.py").read_text() == "x = 1\ny = x + 1\nz = x + 1\nw = x + 1\n"
    with pytest.raises(ToolError, match="count allows it at most 2 times"):
        tools["edit_file"]("calc.py", "x + 1", "x + 2", 2)
    out = tools["edit_file"]("calc.py", "x + 1", "x + 2", 3)
    assert "replaced 3 occurrences" in out and "+3 \u22123 lines" in out
    assert (root / "calc.py").read_text().count("x + 2") == 3


def test_edit_file_argument_errors(root: Path, tools: dict) -> None:
    with pytest.raises(ToolError, match="old must not be empty"):
        tools["edit_file"]("notes.md", "", "x")
    with pytest.raises(ToolError, match="the same text"):
        tools["edit_file"]("notes.md", "beta", "beta")
    with pytest.raises(ToolError, match="missing.md does not exist; create it with write_file"):
        tools["edit_file"]("missing.md", "a", "b")
    with pytest.raises(ToolError, match="symlink"):
        tools["edit_file"]("secret_link.txt", "TOP", "NOT")
    model = tools["edit_file"].args_model
    with pytest.raises(Exception):
        model(path="x", old="a", new="b", count=0)


def test_edit_file_keeps_crlf_and_legacy_encoding(root: Path, tools: dict) -> None:
    (root / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    tools["edit_file"]("win.txt", "two\nthree", "2\n3")
    assert (root / "win.txt").read_bytes() == b"one\r\n2\r\n3\r\n"
    (root / "old.txt").write_bytes("café crème\n".encode("latin-1"))
    tools["edit_file"]("old.txt", "crème", "brûlée")
    assert (root / "old.txt").read_bytes() == "café brûlée\n".encode("latin-1")


# previews -------------------------------------------------------------------------------
def test_preview_is_a_diff_computed_without_writing(root: Path, tools: dict, store: CheckpointStore) -> None:
    preview = tools["edit_file"].metadata["preview"]({"path": "notes.md", "old": "beta", "new": "BETA"})
    assert preview == {
        "path": "notes.md",
        "diff": "--- a/notes.md\n+++ b/notes.md\n@@ -1,4 +1,4 @@\n # Notes\n alpha\n-beta\n+BETA\n gamma",
        "new_file": False,
        "summary": "+1 \u22121",
    }
    created = tools["write_file"].metadata["preview"]({"path": "new/x.txt", "content": "a\nb\n"})
    assert created["new_file"] is True and created["path"] == "new/x.txt" and created["summary"] == "+2 \u22120"
    assert created["diff"].splitlines()[:2] == ["--- /dev/null", "+++ b/new/x.txt"]
    assert (root / "notes.md").read_text() == "# Notes\nalpha\nbeta\ngamma\n"
    assert not (root / "new").exists() and store.list() == []


def test_preview_reports_errors_and_clips_long_diffs(root: Path, tools: dict) -> None:
    bad = tools["write_file"].metadata["preview"]({"path": "../outside/x", "content": "x"})
    assert bad["diff"] == "" and "'..'" in bad["error"] and bad["path"] == "../outside/x"
    invalid = tools["edit_file"].metadata["preview"]({"path": "notes.md"})
    assert "invalid arguments" in invalid["error"]
    big = tools["write_file"].metadata["preview"]({"path": "big.txt", "content": "".join(f"{i}\n" for i in range(500))})
    lines = big["diff"].splitlines()
    assert len(lines) == 201 and lines[-1] == "… (303 more diff lines not shown)"
    assert big["summary"] == "+500 \u22120"


def test_without_a_store_the_tools_still_write_and_say_so(root: Path) -> None:
    tools = {t.name: t for t in write_tools(root, lambda: None)}
    out = tools["write_file"]("plain.txt", "x")
    assert "cannot be undone" in out and (root / "plain.txt").read_text() == "x"


def test_tools_without_an_explicit_store_use_the_active_one(root: Path, tmp_path: Path) -> None:
    cps = CheckpointStore(tmp_path / "active")
    cps.begin_turn("sess", "turn-a")
    tools = {t.name: t for t in write_tools(root)}
    tools["write_file"]("via_active.txt", "x")
    [cp] = cps.list()
    assert (cp.session_id, cp.turn_id, cp.action) == ("sess", "turn-a", "created")
    cps.close()


# permission gates -----------------------------------------------------------------------
def _call(name: str, **args) -> ToolCall:
    return ToolCall(id=f"c-{name}", name=name, arguments=args)


def test_read_only_mode_refuses_writes(root: Path, store: CheckpointStore) -> None:
    registry = AgentToolRegistry(default_tools({}, root, checkpoint_store=store), permission_mode="read-only")
    executor = BoundedToolExecutor(registry, approver=lambda *a: True)
    [outcome] = executor.execute([_call("write_file", path="x.txt", content="x")], ToolTurnState())
    assert outcome.status == "denied" and "writes files" in outcome.output
    assert not (root / "x.txt").exists() and store.list() == []


def test_ask_mode_shows_the_preview_before_anything_is_written(root: Path, store: CheckpointStore) -> None:
    registry = AgentToolRegistry(default_tools({}, root, checkpoint_store=store), permission_mode="ask")
    seen = []

    def approver(call, spec, arguments):
        seen.append((spec.name, spec.metadata["preview"](arguments), (root / "notes.md").read_text()))
        return call.id == "yes"

    executor = BoundedToolExecutor(registry, approver=approver)
    calls = [ToolCall(id="no", name="edit_file", arguments={"path": "notes.md", "old": "alpha", "new": "A"}),
             ToolCall(id="yes", name="edit_file", arguments={"path": "notes.md", "old": "beta", "new": "B"})]
    denied, approved = executor.execute(calls, ToolTurnState())
    assert denied.status == "denied" and approved.status == "ok"
    assert [s[0] for s in seen] == ["edit_file", "edit_file"]
    assert seen[0][1]["summary"] == "+1 \u22121" and "-alpha\n+A" in seen[0][1]["diff"]
    assert all(s[2] == "# Notes\nalpha\nbeta\ngamma\n" for s in seen)  # nothing written while asking
    assert (root / "notes.md").read_text() == "# Notes\nalpha\nB\ngamma\n"
    assert len(store.list()) == 1


def test_auto_mode_writes_and_write_calls_run_one_at_a_time(root: Path, store: CheckpointStore) -> None:
    registry = AgentToolRegistry(default_tools({}, root, checkpoint_store=store), permission_mode="auto")
    executor = BoundedToolExecutor(registry, approver=lambda *a: Approval(False))
    calls = [_call("write_file", path="a.txt", content="a"), _call("edit_file", path="notes.md", old="gamma", new="G"),
             _call("read_file", path="a.txt"), _call("list_files")]
    assert [len(w) for w in executor.plan_waves(calls)] == [1, 1, 2]
    outcomes = executor.execute(calls, ToolTurnState())
    assert [o.status for o in outcomes] == ["ok", "ok", "ok", "ok"]
    assert "a.txt" in outcomes[2].output and (root / "a.txt").read_text() == "a"
    assert {cp.action for cp in store.list()} == {"created", "modified"}


def test_default_tools_include_the_write_tools(root: Path) -> None:
    registry = AgentToolRegistry(default_tools({}, root))
    for name in ("write_file", "edit_file"):
        spec = registry.get(name)
        assert spec.effect == "write" and not spec.parallel_safe and not spec.retry_on_timeout
        assert registry.permission_for(name) == "ask"
        assert callable(spec.metadata["preview"])
