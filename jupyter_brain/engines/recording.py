"""An outside agent's turn as recorded: the ACP updates it sent, the permissions it asked
and how they were answered, and what it did through the notebook's services (kernel code,
file writes). Saved like a harness turn's recording — the output's metadata
(``metadata.jupyter_brain.engine_recording``) and an ``engine_recording`` record of the
event log — and replayed with no agent, key or network: the updates go through the same
mapping, the kernel code runs again (so later cells find its variables) and the writes are
made again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import Field

from ..providers.replay.recording import VersionedRecording

RECORD_KIND = "engine_recording"
METADATA_KEY = "engine_recording"


class EngineRecording(VersionedRecording):
    cell: str = ""  # the cell's key (its source's hash)
    engine: str
    prompt: str  # as sent: a different prompt is a mismatch
    items: list[dict[str, Any]] = Field(default_factory=list)  # {"kind": update|permission|kernel|write, ...}
    stop_reason: str = ""

    def matches(self, engine: str, prompt: str) -> bool:
        return self.engine == engine and self.prompt == prompt


def cell_key(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def saved_engine_recordings(paths: list[Path], cell_id: str | None, key: str) -> list[EngineRecording]:
    """The saved notebooks' recordings of this cell: by cell id first, then by its source."""
    by_id: list[EngineRecording] = []
    by_key: list[EngineRecording] = []
    for path in paths:
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for cell in notebook.get("cells") or [] if isinstance(notebook, dict) else []:
            for output in cell.get("outputs") or [] if isinstance(cell, dict) else []:
                meta = (output.get("metadata") or {}).get("jupyter_brain") if isinstance(output, dict) else None
                found = EngineRecording.load(meta.get(METADATA_KEY)) if isinstance(meta, dict) else None
                if found is None:
                    continue
                if cell_id and cell.get("id") == cell_id:
                    by_id.append(found)
                elif found.cell == key:
                    by_key.append(found)
    return [*by_id, *by_key]


def logged_engine_recordings(event_log: Any, key: str) -> list[EngineRecording]:
    try:
        records = event_log.records(RECORD_KIND)
    except Exception:  # noqa: BLE001 - an unreadable log only means nothing to replay from it
        return []
    found = [EngineRecording.load(r.get("recording")) for r in reversed(records) if r.get("cell") == key]
    return [r for r in found if r is not None]
