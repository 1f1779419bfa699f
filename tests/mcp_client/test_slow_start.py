"""A server whose start outlasts the manager's bound is said, never silently left out."""

from __future__ import annotations

import sys

import pytest

from .servers import write_config

pytestmark = pytest.mark.mcp_server

# A server that never answers the handshake, with a start bound far beyond the manager's.
MUTE = {"command": sys.executable, "args": ["-c", "import time; time.sleep(60)"], "startup_timeout_s": 600}


def test_a_start_that_outlasts_the_bound_is_reported_and_retried_next_turn(manager, tmp_path, monkeypatch):
    path = write_config(tmp_path, {"mute": MUTE})
    monkeypatch.setattr(manager, "_start_budget", lambda pending: 3.0)  # the start itself would wait 600 s
    reports: list[str] = []
    tools = manager.tools(path, report=reports.append)
    assert tools == []
    assert reports == [
        "MCP server 'mute' did not start within 3s; its tools are left out of this turn and the next turn "
        "tries again."]
    assert manager.connections["mute"].state not in ("running", "failed")  # still starting: not given up

    reports.clear()
    manager.tools(path, report=reports.append)  # the next turn tries again, and says so again
    assert any("MCP server 'mute' did not start within 3s" in r for r in reports)
