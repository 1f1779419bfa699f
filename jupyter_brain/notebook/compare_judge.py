"""A ``%%compare --judge`` cell's verdicts, kept with its runs' recordings (#27).

A replayed comparison replays its answers; its judge should not be asked about them again
(``evals/judge_memory.py``). The verdicts travel where the runs' recordings do: in the
cell's output (``metadata.jupyter_brain.judged``, beside ``recordings``) and in the event
log (a ``judge_verdict`` record each). A fresh kernel finds them in the notebook files it
reads recordings from (``recordings.py``) and in the log. ``--rerun`` asks again;
``--replay strict`` never asks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..evals.judge_memory import RecordedVerdicts
from ..foundation.redact import Redactor, redact_value

RECORD_KIND = "judge_verdict"
MAX_BYTES = 50 * 1024 * 1024  # a bigger notebook is not searched (as recordings.py)
_cache: dict[str, tuple[tuple[int, int], dict[str, dict[str, Any]]]] = {}


def saved_verdicts(path: Path) -> dict[str, dict[str, Any]]:
    """The verdicts a saved notebook's outputs carry, by key (read once per file version)."""
    try:
        stat = path.stat()
    except OSError:
        return {}
    key, version = str(path.resolve()), (stat.st_mtime_ns, stat.st_size)
    cached = _cache.get(key)
    if cached is not None and cached[0] == version:
        return cached[1]
    found: dict[str, dict[str, Any]] = {}
    if stat.st_size <= MAX_BYTES:
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            notebook = {}
        for cell in notebook.get("cells") or [] if isinstance(notebook, dict) else []:
            for output in cell.get("outputs") or [] if isinstance(cell, dict) else []:
                meta = output.get("metadata") if isinstance(output, dict) else None
                ours = meta.get("jupyter_brain") if isinstance(meta, dict) else None
                judged = ours.get("judged") if isinstance(ours, dict) else None
                for entry in judged if isinstance(judged, list) else []:
                    if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                        found[entry["key"]] = {k: v for k, v in entry.items() if k != "key"}
    _cache[key] = (version, found)
    return found


def logged_verdicts(event_log: Any) -> dict[str, dict[str, Any]]:
    """The event log's verdicts, by key (the newest wins)."""
    try:
        records = event_log.records(RECORD_KIND)
    except Exception:  # noqa: BLE001 - an unreadable log only means nothing recorded there
        return {}
    return {r["key"]: dict(r.get("verdict") or {}) for r in records if isinstance(r.get("key"), str)}


def cell_verdicts(mode: str, files: list[Path], event_log: Any) -> RecordedVerdicts:
    """The verdicts this cell can reuse: none with ``--rerun`` (mode ``off``)."""
    if mode == "off":
        return RecordedVerdicts(reuse=False)
    known: dict[str, dict[str, Any]] = {}
    for path in files:
        known.update(saved_verdicts(path))
    if event_log is not None:
        known.update(logged_verdicts(event_log))
    return RecordedVerdicts(known=known, strict=mode == "strict")


def judge_verdicts(magics: Any, options: Any, args: Any) -> RecordedVerdicts | None:
    """The cell's recorded verdicts when it has a ``--judge`` (None otherwise)."""
    if getattr(args, "judge", None) is None:
        return None
    from .replay import kernel_notebooks, replay_mode

    mode = replay_mode(options, args)
    user_ns = magics.shell.user_ns if magics.shell is not None else {}
    return cell_verdicts(mode, kernel_notebooks(magics, user_ns) if mode != "off" else [], magics.manager.event_log)


def keep_verdicts(verdicts: RecordedVerdicts | None, event_log: Any, metadata: dict[str, Any]) -> dict[str, Any]:
    """Log the verdicts given now; the cell's output metadata with every verdict it used."""
    if verdicts is None:
        return metadata
    for key, verdict in list(verdicts.new.items()):
        event_log.add_record(RECORD_KIND, {"key": key, "verdict": verdict})
    used = redact_value(verdicts.this_run(), Redactor())  # a judge's reason may quote a key: the notebook is shared
    if not used:
        return metadata
    ours = dict(metadata.get("jupyter_brain") or {})
    ours["judged"] = used
    return {**metadata, "jupyter_brain": ours}


__all__ = ["RECORD_KIND", "cell_verdicts", "judge_verdicts", "keep_verdicts", "logged_verdicts", "saved_verdicts"]
