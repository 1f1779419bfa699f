"""Re-execute the example notebooks and save their outputs the way the tests replay them.

nbval runs cells with ``store_history=False``, so the kernel's ``In`` stays empty and the
agent's workspace has no "Recent cells" part; executing with ``jupyter nbconvert`` would
save token counts that nbval can never reproduce. This runs each cell the nbval way (in
the notebook's folder, offline: API keys removed) and drops per-cell timing metadata.
nbclient applies the agent views' end-of-turn ``update_display_data`` (the Markdown
transcript), and ``notebooks/conftest.py`` makes nbval apply it too, so nbval compares the
saved transcripts (``notebooks/nbval_sanitize.cfg`` masks durations and embedded images).

Each ``%%agent`` output carries its turn's recording, and an unchanged cell replays it, so
its header reads ``replayed/<model>``.

Each kernel is started with ``JPY_SESSION_NAME`` set to its notebook, as jupyter-server does
(and ``notebooks/conftest.py`` for nbval), so the saved header names the session a user's
fresh run names (``session quickstart``, not ``default``). The kernel's execution counter
stays at 0 under ``store_history=False``: each ``execute_result`` gets its cell's count, so
a saved notebook shows ``Out[3]:``, not ``[0]:``. A turn that went live (a new or changed cell) saves
a new recording, which the next run replays: a notebook is executed again until its
recordings stop changing, so the saved outputs are the ones nbval's own run reproduces.

    .venv/bin/python scripts/execute_notebooks.py [notebooks/NAME.ipynb ...]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "JUPYTER_BRAIN_BASE_URL")


class NbvalLikeClient(NotebookClient):
    """Executes cells without storing them in the kernel's history, as nbval does."""

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        return await super().async_execute_cell(cell, cell_index, execution_count, store_history=False)


MAX_RUNS = 3  # the first run records what changed, the second replays it


def recordings(nb) -> list:
    """The turn recordings a notebook's outputs carry, in order (an ``%%agent`` output's
    ``recording``, a ``%%compare`` output's ``recordings``)."""
    ours = [out.get("metadata", {}).get("jupyter_brain", {}) for cell in nb.cells for out in cell.get("outputs", [])]
    return [[meta.get("recording"), meta.get("recordings")] for meta in ours if meta]


def execute(path: Path) -> None:
    for run in range(1, MAX_RUNS + 1):
        nb = nbformat.read(path, as_version=4)
        before = recordings(nb)
        os.environ["JPY_SESSION_NAME"] = str(path)  # the kernel's notebook, as jupyter-server says it
        NbvalLikeClient(nb, timeout=600, kernel_name="python3",
                        resources={"metadata": {"path": str(path.parent)}}).execute()
        for cell in nb.cells:
            cell.metadata.pop("execution", None)
            for output in cell.get("outputs", []):
                if output.get("output_type") == "execute_result":
                    output["execution_count"] = cell.get("execution_count")
        nbformat.write(nb, path)
        if recordings(nb) == before:
            print(f"executed {path.relative_to(ROOT)} ({run} run{'s' * (run > 1)})")
            return
    print(f"executed {path.relative_to(ROOT)}: its recordings still changed after {MAX_RUNS} runs "
          "(a turn that never replays: --rerun, AgentMagics.replay off?)")


def main() -> None:
    for key in KEYS:
        os.environ.pop(key, None)
    paths = [Path(p).resolve() for p in sys.argv[1:]] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        execute(path)


if __name__ == "__main__":
    main()
