"""``AgentMagics.workspace_dir`` and ``AgentMagics.runtime`` in a real (in-process) IPython
shell with the scripted provider: which folder the workspace lists, and how much the runtime
message says about the machine."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from jupyter_brain.providers.scripted import ScriptedProvider

# Re-runs call the model here: what they send is what is checked.
pytestmark = pytest.mark.usefixtures("live_reruns")


def agent(sh, line, cell):
    return sh.run_cell_magic("agent", line, cell)


def _kinds(call: dict) -> dict[str, str]:
    return {m["kind"]: m["content"] for m in call["messages"] if m.get("kind")}


def test_the_workspace_lists_the_working_directory_by_default(shell) -> None:
    Path("here.csv").write_text("a,b\n", encoding="utf-8")
    bot = ScriptedProvider(["ok"])
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "hi")
    assert "here.csv" in _kinds(bot.calls[0])["workspace"]


def test_workspace_dir_fixes_the_listing(shell) -> None:
    Path("data").mkdir()
    Path("data/sales.csv").write_text("month,revenue\n", encoding="utf-8")
    bot = ScriptedProvider(["ok", "ok", "ok"])
    shell.user_ns["bot"] = bot
    shell.run_line_magic("config", 'AgentMagics.workspace_dir = "data"')  # relative to the working directory
    agent(shell, "--provider bot", "hi")
    listed = _kinds(bot.calls[0])["workspace"]
    assert "data/ — 1 file" in listed and "sales.csv" in listed
    Path("scratch.txt").write_text("a file added beside the notebook", encoding="utf-8")
    agent(shell, "--provider bot", "hi")
    assert _kinds(bot.calls[1])["workspace"] == listed
    shell.run_line_magic("config", f"AgentMagics.workspace_dir = {str(Path('data').resolve())!r}")
    os.chdir(Path("data"))  # an absolute folder stays put when the notebook changes directory
    agent(shell, "--provider bot", "hi")
    assert _kinds(bot.calls[2])["workspace"] == listed


def test_compare_cells_list_the_workspace_dir_too(shell) -> None:
    Path("data").mkdir()
    Path("data/sales.csv").write_text("month,revenue\n", encoding="utf-8")
    Path("elsewhere.txt").write_text("not in data/", encoding="utf-8")
    seen: list[str] = []

    def reply(messages, _tools):  # shared by the run's clone of the provider
        seen.append(_kinds({"messages": messages})["workspace"])
        return "ok"

    shell.user_ns["bot"] = ScriptedProvider([reply])
    shell.run_line_magic("config", 'AgentMagics.workspace_dir = "data"')
    shell.run_cell_magic("compare", "--strategies cot --provider bot", "hi")
    assert len(seen) == 1 and "sales.csv" in seen[0] and "elsewhere.txt" not in seen[0]


def test_runtime_full_names_the_date_and_the_python(shell) -> None:
    bot = ScriptedProvider(["ok"], model="tiny-model")
    shell.user_ns["bot"] = bot
    agent(shell, "--provider bot", "hi")
    runtime = _kinds(bot.calls[0])["runtime"]
    assert "tiny-model via scripted" in runtime and "Today is" in runtime
    assert platform.python_version() in runtime


def test_runtime_model_is_the_same_on_every_machine(shell, monkeypatch) -> None:
    bot = ScriptedProvider(["ok", "ok"], model="tiny-model")
    shell.user_ns["bot"] = bot
    shell.run_line_magic("config", 'AgentMagics.runtime = "model"')
    agent(shell, "--provider bot", "hi")
    monkeypatch.setattr(platform, "python_version", lambda: "3.99.123")  # another machine
    agent(shell, "--provider bot", "hi")
    first, second = (_kinds(call)["runtime"] for call in bot.calls)
    assert first == second == "Runtime: you are answering as tiny-model via scripted."


def test_runtime_off_sends_no_runtime_message(shell) -> None:
    bot = ScriptedProvider(["ok"], model="tiny-model")
    shell.user_ns["bot"] = bot
    shell.run_line_magic("config", 'AgentMagics.runtime = "off"')
    agent(shell, "--provider bot", "hi")
    assert "runtime" not in _kinds(bot.calls[0])


def _system(call: dict) -> str:
    return next(m["content"] for m in call["messages"] if m["role"] == "system")


def _checkout(root: Path) -> Path:
    folder = root / "notebooks"
    folder.mkdir(parents=True)
    os.chdir(folder)
    return folder


def test_runtime_model_names_the_working_folder_not_its_path(shell, tmp_path) -> None:
    """The same notebook checked out in two places sends the same system prompt (the CI's
    fresh clone once saved token counts 2 lower than the developer's checkout)."""
    bot = ScriptedProvider(["ok", "ok", "ok"], model="tiny-model")
    shell.user_ns["bot"] = bot
    shell.run_line_magic("config", 'AgentMagics.runtime = "model"')
    _checkout(tmp_path / "home" / "alice" / "project")
    agent(shell, "--provider bot --strategy react", "hi")
    _checkout(tmp_path / "tmp.XYZ123")
    agent(shell, "--provider bot --strategy react", "hi")
    first, second = (_system(call) for call in bot.calls[:2])
    assert first == second and "Working Directory: notebooks\n" in first and str(tmp_path) not in first
    shell.run_line_magic("config", 'AgentMagics.runtime = "full"')  # the full path where it helps the model
    agent(shell, "--provider bot --strategy react", "hi")
    assert f"Working Directory: {tmp_path / 'tmp.XYZ123' / 'notebooks'}\n" in _system(bot.calls[2])


def test_compare_cells_name_the_working_folder_too(shell, tmp_path) -> None:
    seen: list[str] = []

    def reply(messages, _tools):
        seen.append(_system({"messages": messages}))
        return "ok"

    shell.user_ns["bot"] = ScriptedProvider([reply])
    shell.run_line_magic("config", 'AgentMagics.runtime = "model"')
    _checkout(tmp_path / "somewhere")
    shell.run_cell_magic("compare", "--strategies cot --provider bot", "hi")
    assert len(seen) == 1 and "Working Directory: notebooks\n" in seen[0] and str(tmp_path) not in seen[0]
