"""Which cell a ``%%agent`` turn ran from, so that running the cell again replaces its turn.

JupyterLab and Notebook 7 send the cell's id (``cellId`` in the execute request's
metadata, ``current_cell_id``): a cell keeps it across edits, so an edited
prompt still replaces the cell's earlier turn. Other front-ends send none (VS Code,
nbclient/nbconvert, papermill, terminal IPython): there the cell is known by a hash of
its text, the ``%%agent`` line and the prompt as written (before ``{name}`` interpolation), so running the same text again
is a re-run, and an edited cell counts as a new one.

``execution`` tells runs of a cell apart: turns started by one execution of a cell (a
loop calling ``run_cell_magic``) do not replace each other.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..cell_turns import CellRun
from .headless import execute_request
from .headless import request_cell_id as current_cell_id  # JupyterLab's id of the running cell

RUN_FLAGS = ("--append", "--rerun")  # how to run the cell this time, not what it asks
RUN_OPTIONS = ("--replay",)  # the same, with a value


def cell_flags(line: str) -> list[str]:
    """The magic line's words without ``--append``, ``--rerun`` and ``--replay MODE``:
    adding one of them to a cell does not make it another cell (for its turn here, for its
    recordings in ``replay.cell_source``)."""
    return without_flags(line.split(), switches=RUN_FLAGS, options=RUN_OPTIONS)


def without_flags(words: list[str], *, switches: tuple[str, ...], options: tuple[str, ...]) -> list[str]:
    """``words`` less the ``switches`` and the ``options`` with their values (``--opt V`` or
    ``--opt=V``)."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in options:
            skip = True
        elif word not in switches and not word.startswith(tuple(f"{o}=" for o in options)):
            kept.append(word)
    return kept


def source_key(line: str, body: str) -> str:
    """The fallback key: the ``%%agent`` line (``cell_flags``) and the prompt; spacing in
    the line and at the prompt's ends ignored."""
    text = f"{' '.join(cell_flags(line))}\n{body.strip()}".encode()
    return "src:" + hashlib.sha256(text).hexdigest()[:16]


def cell_run(shell: Any, line: str, body: str) -> CellRun:
    """The cell this ``%%agent`` turn runs from: the front-end's cell id, else its text."""
    cell_id = current_cell_id(shell)
    key = f"id:{cell_id}" if cell_id else source_key(line, body)
    return CellRun(key=key, execution=_execution_id(shell))


def _execution_id(shell: Any) -> str | None:
    header = (execute_request(shell) or {}).get("header")
    msg_id = header.get("msg_id") if isinstance(header, dict) else None
    return str(msg_id) if msg_id else None

