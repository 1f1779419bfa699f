"""Where a fresh kernel finds the recordings of the cell it runs (issue #24).

A recording is kept in two places: the saved notebook (``metadata.jupyter_brain.recording``
of the agent's output, written by every frontend and by nbclient, nbconvert and
papermill) and the event log (a ``recording`` record). A kernel does not know its
notebook's path, so the notebook files searched are, in order:

1. ``AgentMagics.notebook`` when set;
2. ``__vsc_ipynb_file__`` (VS Code sets it in the namespace);
3. ``JPY_SESSION_NAME`` (jupyter-server sets it for a notebook's kernel: JupyterLab,
   Notebook 7; absolute, or relative to the working directory);
4. when none of these names an existing file: every ``.ipynb`` file of the working
   directory (nbconvert and papermill start the kernel in the notebook's folder and set
   neither).

The candidates of a cell, most specific first: the saved cell with the same cell id
(JupyterLab's ``cellId``), the event log's recordings of the same cell source (newest
first), then the saved cells with the same source. Which one replays is decided by the
turn's first request (``ReplayingProvider``): the first candidate whose first request had
the same fingerprint.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..providers.replay import TurnRecording, cell_key

MAX_FILES = 50  # .ipynb files of the working directory read at most
MAX_BYTES = 50 * 1024 * 1024  # a bigger file is not searched
MAX_CANDIDATES = 20
RECORD_KIND = "recording"  # the event log's records (agent/integrations/recording)


@dataclass(frozen=True)
class SavedRecording:
    """A recording found in a saved notebook, with the cell it belongs to."""

    recording: TurnRecording
    cell_id: str | None
    path: str


_cache: dict[str, tuple[tuple[int, int], list[SavedRecording]]] = {}


def notebook_path(user_ns: dict[str, Any], setting: str = "") -> Path | None:
    """The kernel's own notebook, when something says which it is."""
    cwd = Path.cwd()
    for named in (setting, user_ns.get("__vsc_ipynb_file__"), os.environ.get("JPY_SESSION_NAME")):
        if not named or not isinstance(named, str):
            continue
        path = Path(named).expanduser()
        for candidate in ((path,) if path.is_absolute() else (cwd / path, cwd / path.name)):
            if candidate.suffix == ".ipynb" and candidate.is_file():
                return candidate
    return None


def notebook_files(own: Path | None) -> list[Path]:
    """The kernel's notebook when it is known, else the working directory's notebooks."""
    if own is not None:
        return [own]
    try:
        return sorted(Path.cwd().glob("*.ipynb"))[:MAX_FILES]
    except OSError:
        return []


def saved_recordings(path: Path) -> list[SavedRecording]:
    """The recordings a saved notebook carries (read once per version of the file)."""
    try:
        stat = path.stat()
    except OSError:
        return []
    key, version = str(path.resolve()), (stat.st_mtime_ns, stat.st_size)
    cached = _cache.get(key)
    if cached is not None and cached[0] == version:
        return cached[1]
    found: list[SavedRecording] = []
    if stat.st_size <= MAX_BYTES:
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            notebook = {}
        cells = notebook.get("cells") if isinstance(notebook, dict) else None
        for cell in cells if isinstance(cells, list) else []:
            found.extend(SavedRecording(recording, cell.get("id"), str(path)) for recording in _cell_recordings(cell))
    _cache[key] = (version, found)
    return found


def _cell_recordings(cell: Any) -> list[TurnRecording]:
    """A code cell's recordings: its last output's ``recording`` (an ``%%agent`` turn), or
    its ``recordings`` (one per run of a ``%%compare`` cell, each under its run's key)."""
    if not isinstance(cell, dict) or cell.get("cell_type") != "code":
        return []
    found: list[TurnRecording] = []
    for output in cell.get("outputs") or []:
        meta = output.get("metadata") if isinstance(output, dict) else None
        ours = meta.get("jupyter_brain") if isinstance(meta, dict) else None
        if not isinstance(ours, dict):
            continue
        if "recording" in ours:
            one = TurnRecording.load(ours["recording"])
            found = [one] if one is not None else found
        runs = ours.get("recordings")
        if isinstance(runs, list):
            found = [r for r in map(TurnRecording.load, runs[:MAX_CANDIDATES * 10]) if r is not None]
    return found


def logged_recordings(event_log: Any, key: str) -> list[TurnRecording]:
    """The event log's recordings of a cell source, newest first."""
    try:
        records = event_log.records(RECORD_KIND)
    except Exception:  # noqa: BLE001 - an unreadable log only means nothing to replay from it
        return []
    found = [TurnRecording.load(r.get("recording")) for r in reversed(records) if r.get("cell") == key]
    return [r for r in found if r is not None][:MAX_CANDIDATES]


def candidates_for(source: str, cell_id: str | None, files: list[Path], event_log: Any) -> list[TurnRecording]:
    """A cell's candidate recordings, most specific first (see the module's docstring)."""
    key = cell_key(source)
    saved = [s for path in files for s in saved_recordings(path)]
    by_id = [s.recording for s in saved if cell_id and s.cell_id == cell_id]
    by_source = [s.recording for s in saved if s.recording.cell == key]
    ordered: list[TurnRecording] = []
    seen: set[str] = set()
    for recording in [*by_id, *(logged_recordings(event_log, key) if event_log is not None else []), *by_source]:
        marker = json.dumps([c.fp for c in recording.calls])
        if marker not in seen:
            seen.add(marker)
            ordered.append(recording)
    return ordered[:MAX_CANDIDATES]
