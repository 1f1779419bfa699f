"""Fixtures for the outside-agent tests: the real ``claude-code-acp`` from tests/engines/npm
(``npm ci`` there; scripts/test.sh runs it) with its model a scripted local Messages server.
Outside CI a missing install skips, naming the fix; under ``CI=true`` it fails.

What claude-code-acp 0.16.2 (Claude Code 2.1.44 inside) does here, offline:
- one ``POST /v1/messages?beta=true`` per step, ``stream: true``, model
  ``claude-sonnet-4-5-20250929``, ``max_tokens`` 32000, 16 tools (its own, with Read, Write and
  Edit as ``mcp__acp__*``: they go through the client's ``fs/*``) plus each MCP server's as
  ``mcp__<server>__<tool>``; no ``count_tokens``, no model listing, no title side call with
  ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``;
- a ``tool_call`` is sent twice (an empty one, then with ``rawInput``); a permission request
  names the call but not its kind or diff (the earlier ``tool_call`` had them); only edits ask
  (reads do not); no ``usage_update``, no usage in the prompt's response;
- ``session/fork`` works only on a session that was prompted at least once ("Internal error"
  otherwise); ``session/load`` is offered.
"""

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
