"""Fixtures shared by the test modules."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture()
def shell(tmp_path, monkeypatch):
    """An in-process IPython with jupyter_brain loaded, in a fresh folder, with no API keys."""
    monkeypatch.chdir(tmp_path)
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    InteractiveShell.clear_instance()
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "jupyter_brain")
    yield sh
    magics = sh.magics_manager.registry["AgentMagics"]
    if magics._manager is not None:
        magics._manager.event_log.close()
    sh.run_line_magic("unload_ext", "jupyter_brain")
    InteractiveShell.clear_instance()
