"""Fixtures of the governance tests: policy files, a kernel-less IPython under a policy,
and a real PostgreSQL (``postgres``: started once per session by ``tests/governance/postgres.py``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from .postgres import PostgresServer, server_bin


@pytest.fixture()
def write_policy(tmp_path) -> Callable[..., str]:
    def write(document: Any, name: str = "jupyter_brain_policy.json") -> str:
        path = tmp_path / name
        path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
        return str(path)
    return write


@pytest.fixture()
def governed_shell(tmp_path, monkeypatch) -> Iterator[Callable[..., InteractiveShell]]:
    """``governed_shell(policy_path, user)``: an in-process IPython with jupyter_brain loaded
    under that policy, as that user."""
    monkeypatch.chdir(tmp_path)
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    shells: list[InteractiveShell] = []

    def make(policy: str | None, user: str = "alice") -> InteractiveShell:
        if policy is None:
            monkeypatch.delenv("JUPYTER_BRAIN_POLICY", raising=False)
        else:
            monkeypatch.setenv("JUPYTER_BRAIN_POLICY", policy)
        monkeypatch.setenv("JUPYTERHUB_USER", user)
        InteractiveShell.clear_instance()
        sh = InteractiveShell.instance()
        sh.run_line_magic("load_ext", "jupyter_brain")
        shells.append(sh)
        return sh

    yield make
    for sh in shells:
        magics = sh.magics_manager.registry["AgentMagics"]
        if magics.governance is not None:
            magics.governance.close()
        if magics._manager is not None:
            magics._manager.event_log.close()
    from jupyter_brain.tools import values_policy

    values_policy.set_send_outputs(True)
    from jupyter_brain.mcp.manager import set_kernel_admission

    set_kernel_admission(None)
    InteractiveShell.clear_instance()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL on a free port; skipped where the server is not installed, except
    in CI (scripts/test.sh installs it), where its absence fails."""
    if server_bin() is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL's server is not installed: scripts/test.sh installs Debian's postgresql")
        pytest.skip("PostgreSQL's server is not installed (apt-get install postgresql)")
    pytest.importorskip("psycopg")
    server = PostgresServer().init()
    server.start()
    yield server
    server.remove()
