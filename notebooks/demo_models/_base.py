"""Whether a real model is configured, and the helpers every script shares."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_brain.providers.registry import configured_provider

_KEEP: list[tempfile.TemporaryDirectory[str]] = []


def live() -> bool:
    """True when ``--provider auto`` finds a model: an API key or a local server's URL."""
    return configured_provider() is not None


def pick(scripted: Callable[[], Any]) -> Any:
    """``"auto"`` when a real model is configured, else the scripted stand-in."""
    return "auto" if live() else scripted()


def temporary_data_dir() -> str:
    """A fresh folder for the event log, deleted when the kernel exits: the notebook starts
    with no sessions and its outputs are the same on every run."""
    tmp = tempfile.TemporaryDirectory(prefix="jupyter-brain-", ignore_cleanup_errors=True)
    _KEEP.append(tmp)
    return tmp.name


DEMO_WORKSPACE = Path(__file__).resolve().parent.parent / "data"
"""The folder the demos' workspace lists: the notebooks' own data, whatever else is beside them."""


DEFAULT_PROVIDER = "_demo_model"
"""The kernel variable ``demo_setup`` puts the notebook's model in (private: the workspace the
agent sees lists no ``_`` names), and that ``AgentMagics.provider`` names."""


def demo_setup(model: Any = None, *, data_dir: str | None = None) -> None:
    """The example notebooks' one setup call, so that every request (and every saved output) is
    the same on any machine: a fresh event log (``AgentMagics.data_dir``, a temporary folder
    unless given), a workspace that lists ``notebooks/data`` (``AgentMagics.workspace_dir``:
    not the notebooks' folder, where a new file would change every request) and a runtime
    message that names only the model (``AgentMagics.runtime = "model"``: no date, no Python
    version). ``model`` (a ``*_model()`` of this package: ``"auto"`` live, else scripted)
    becomes the kernel's default provider, so the notebook's ``%%agent`` cells need no
    ``--provider``."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or "AgentMagics" not in shell.magics_manager.registry:
        raise RuntimeError("demo_setup() runs in a notebook after %load_ext jupyter_brain")
    magics = shell.magics_manager.registry["AgentMagics"]
    magics.data_dir = data_dir or temporary_data_dir()
    magics.workspace_dir = str(DEMO_WORKSPACE)
    magics.runtime = "model"
    if model is not None:
        shell.user_ns[DEFAULT_PROVIDER] = model
        magics.provider = DEFAULT_PROVIDER


def tool_output(messages: list[dict[str, Any]], name: str | None = None, containing: str = "") -> str:
    """The latest tool result in the conversation (optionally of one tool, containing some text)."""
    return next(m["content"] for m in reversed(messages)
                if m["role"] == "tool" and name in (None, m.get("name")) and containing in m["content"])


def this_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of the current turn (the history of earlier cells comes first)."""
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return messages[last_user:]


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    """A scripted tool call."""
    return {"name": tool, "arguments": arguments}


def run(code: str, text: str = "", thinking: str = "") -> dict[str, Any]:
    """A scripted reply that runs code."""
    return {"text": text, "thinking": thinking, "tool_calls": [call("run_python", code=code)]}


DROP = re.compile(r"largest drop: (\w+) ([-+\d,]+) \(([-+\d.]+%)\) from ([\d,]+) to ([\d,]+)")
