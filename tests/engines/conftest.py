"""Fixtures for the outside-agent tests: the real ``claude-code-acp`` from tests/engines/npm
(``npm ci`` there; scripts/test.sh runs it) with its model a scripted local Messages server.
Outside CI a missing install skips, naming the fix; under ``CI=true`` it fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .scripted_claude import ScriptedClaude

NPM_DIR = Path(__file__).with_name("npm")
BIN_DIR = NPM_DIR / "node_modules" / ".bin"


def agent_bin() -> Path:
    path = BIN_DIR / "claude-code-acp"
    if path.exists():
        return path
    message = f"claude-code-acp is not installed: run `npm ci` in {NPM_DIR}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


def agent_env(model_url: str, home: Path) -> dict[str, str]:
    """What claude-code-acp needs to run offline here (the quirks: README of tests/engines)."""
    return {
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": "test",
        "IS_SANDBOX": "1",  # we run as root: without it "--dangerously-skip-permissions cannot be used with root"
        "ENABLE_TOOL_SEARCH": "false",  # MCP tools offered directly, not behind a search tool
        "HOME": str(home),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "PATH": f"{BIN_DIR}{os.pathsep}{os.environ.get('PATH', '')}",
    }


@pytest.fixture()
def claude():
    server = ScriptedClaude()
    yield server
    server.stop()


@pytest.fixture()
def agent_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return home
