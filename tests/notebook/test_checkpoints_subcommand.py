"""``%agent checkpoints / undo``: the files the agent wrote, and putting them back
(the store itself: tests/agent/test_checkpoints.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.error import UsageError

from jupyter_brain.providers.scripted import ScriptedProvider


def _writer(*calls: dict) -> ScriptedProvider:
    return ScriptedProvider([{"text": "", "tool_calls": list(calls)}, "done"])


def _write(path: str, content: str) -> dict:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def test_magics_checkpoints_and_undo(shell, tmp_path: Path, capsys) -> None:
    (tmp_path / "data.csv").write_text("x\n1\n")
    shell.run_line_magic("agent", "checkpoints")
    assert "No checkpoints yet" in capsys.readouterr().out
    shell.user_ns["bot"] = _writer(_write("data.csv", "x\n2\n"), _write("out/summary.md", "# Summary\n"))
    shell.run_cell_magic("agent", "--provider bot --permission auto", "write files")
    assert [c.status for c in shell.user_ns["_agent"].tool_calls] == ["ok", "ok"]
    shell.user_ns["bot"] = _writer(_write("data.csv", "x\n3\n"))
    shell.run_cell_magic("agent", "--provider bot --permission auto", "write again")
    capsys.readouterr()

    shell.run_line_magic("agent", "checkpoints")
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "Checkpoints of session default (newest first):"
    assert lines[1].split() == ["time", "turn", "action", "size", "path"]
    assert "2 (" in lines[2] and "modified" in lines[2] and "4 B -> 4 B" in lines[2] and lines[2].endswith("data.csv")
    assert "1 (" in lines[3] and "created" in lines[3] and lines[3].endswith("out/summary.md")
    assert lines[4].endswith("data.csv")
    capsys.readouterr()
    shell.run_line_magic("agent", "checkpoints --limit 1")
    assert len(capsys.readouterr().out.splitlines()) == 3

    shell.run_line_magic("agent", "undo")
    out = capsys.readouterr().out
    assert "Undid turn" in out and "restored  data.csv" in out
    assert (tmp_path / "data.csv").read_text() == "x\n2\n"
    shell.run_line_magic("agent", "undo")
    out = capsys.readouterr().out
    assert "restored  data.csv" in out and "deleted   out/summary.md" in out
    assert (tmp_path / "data.csv").read_text() == "x\n1\n" and not (tmp_path / "out").exists()
    shell.run_line_magic("agent", "undo")
    assert "Nothing to undo" in capsys.readouterr().out
    shell.run_line_magic("agent", "checkpoints")
    assert "(undone)" in capsys.readouterr().out
    assert (tmp_path / ".jupyter_brain" / "checkpoints" / "checkpoints.sqlite").exists()


def test_magics_undo_conflict_force_and_session(shell, tmp_path: Path, capsys) -> None:
    shell.user_ns["bot"] = _writer(_write("notes.txt", "agent\n"))
    shell.run_cell_magic("agent", "--provider bot --permission auto --session side", "write")
    shell.run_line_magic("agent", "use default")
    (tmp_path / "notes.txt").write_text("mine\n")
    capsys.readouterr()
    shell.run_line_magic("agent", "undo")
    assert "Nothing to undo: session 'default'" in capsys.readouterr().out
    shell.run_line_magic("agent", "undo --session side")
    out = capsys.readouterr().out
    assert "Nothing was undone" in out and "conflict  notes.txt (changed since the agent wrote it)" in out
    assert (tmp_path / "notes.txt").read_text() == "mine\n"
    shell.run_line_magic("agent", "checkpoints --session side")
    assert "created" in capsys.readouterr().out
    shell.run_line_magic("agent", "undo --session side --force")
    assert "deleted   notes.txt" in capsys.readouterr().out
    assert not (tmp_path / "notes.txt").exists()


def test_magics_store_follows_data_dir(shell, tmp_path: Path, capsys) -> None:
    other = tmp_path / "elsewhere"
    shell.run_line_magic("config", f"AgentMagics.data_dir = {str(other)!r}")
    shell.user_ns["bot"] = _writer(_write("f.txt", "x"))
    shell.run_cell_magic("agent", "--provider bot --permission auto", "write")
    assert (other / "checkpoints" / "checkpoints.sqlite").exists()
    capsys.readouterr()
    shell.run_line_magic("agent", "checkpoints")
    assert "f.txt" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("undo --bogus", "%agent undo: unrecognized arguments: --bogus"),
        ("undo extra", "%agent undo: unrecognized arguments: extra"),
        ("undo --session", "%agent undo: argument --session: expected one argument"),
        ("checkpoints --limit 0", "%agent checkpoints: argument --limit: must be at least 1"),
        ("checkpoints --limit many", "%agent checkpoints: argument --limit: invalid"),
        ("checkpoints --force", "%agent checkpoints: unrecognized arguments: --force"),
    ],
)
def test_magics_bad_flags(shell, line: str, needle: str) -> None:
    with pytest.raises(UsageError) as info:
        shell.run_line_magic("agent", line)
    assert needle in str(info.value)


def test_help_lists_the_new_subcommands(shell, capsys) -> None:
    shell.run_line_magic("agent", "help")
    out = capsys.readouterr().out
    assert "%agent undo [--session NAME] [--force]" in out
    assert "%agent checkpoints [--session NAME] [--limit N]" in out
