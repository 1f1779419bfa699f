"""Notebooks executed in a real kernel the way another person's machine runs them: no API
key in the environment (the scripted models answer, nothing reaches a hosted one), the
extension loaded first, and its data (event log, sessions, recordings) in the test's own
folder, not the user's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

# The keys and servers a turn could reach, and the notebook name a front-end sets (it names
# the kernel's session; a test run from a JupyterLab terminal has it).
KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL",
            "JUPYTER_BRAIN_BASE_URL", "JPY_SESSION_NAME")


def drop_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, base URL or front-end session name reaches the kernels this test starts (they
    inherit the environment)."""
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


def load_extension(data_dir: Path) -> str:
    """The first lines of a setup cell: the extension, with its data in ``data_dir``."""
    return f"%load_ext jupyter_brain\n%config AgentMagics.data_dir = {str(data_dir)!r}\n"


def notebook(*sources: str) -> nbformat.NotebookNode:
    """A notebook of code cells, in order."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    return nb


def execute(nb: nbformat.NotebookNode, folder: Path, *, timeout: int = 120, **options: Any) -> nbformat.NotebookNode:
    """Run every cell in a fresh ``python3`` kernel whose working folder is ``folder``
    (``options`` go to nbclient: ``allow_errors``, ``store_widget_state``...)."""
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(folder)}},
                   **options).execute()
    return nb


def printed(kc: Any, msg_id: str, on_open: Any = None) -> str:
    """What the request ``msg_id`` printed (its errors too) once the kernel is idle again;
    ``on_open(content)`` is called for every ``comm_open`` the kernel sends meanwhile, as a
    front-end would answer it."""
    text = []
    while True:
        msg = kc.get_iopub_msg(timeout=90)
        if msg["msg_type"] == "comm_open" and on_open is not None:
            on_open(msg["content"])
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            text.append(msg["content"]["text"])
        if msg["msg_type"] == "error":
            text.append("\n".join(msg["content"]["traceback"]))
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(text)
