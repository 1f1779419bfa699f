"""What outside agents did, in the event log beside the notebook, for ``%agent log``.

A kernel's log is ``<data_dir>/events.sqlite`` with ``data_dir`` ``.jupyter_brain`` in its
working folder, which is the notebook's folder: each call on a notebook becomes an
``outside_call`` record there (session, client, tool, arguments masked and clipped, the
gate's decision, a summary of the result), so ``%agent log`` in that notebook lists it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.redact import Redactor, redact_value

RECORD_KIND = "outside_call"
DATA_DIR = ".jupyter_brain"
ARGUMENT_CHARS = 400
SUMMARY_CHARS = 300


class AuditTrail:
    """One event log per notebook folder, opened on first use."""

    def __init__(self, redact: Redactor | None = None) -> None:
        self.redact = redact or Redactor()
        self._logs: dict[Path, EventLog] = {}
        self._lock = threading.Lock()

    def log_for(self, folder: Path) -> EventLog:
        with self._lock:
            log = self._logs.get(folder)
            if log is None:
                log = EventLog(folder / DATA_DIR / "events.sqlite", redact=self.redact)
                self._logs[folder] = log
            return log

    def record(self, folder: Path, session: Any, tool: str, arguments: dict[str, Any],
               decision: dict[str, Any], status: str, summary: str, seconds: float) -> None:
        data = {
            "client": session.client,
            "mcp_session": session.session_id,
            "tool": tool,
            "arguments": redact_value({k: _clip(v, ARGUMENT_CHARS) for k, v in arguments.items()}, self.redact),
            "decision": decision,
            "status": status,
            "summary": self.redact(_clip(summary, SUMMARY_CHARS)),
            "seconds": round(seconds, 3),
        }
        self.log_for(folder).add_record(RECORD_KIND, data, session_id=f"mcp:{session.session_id}")

    def close(self) -> None:
        with self._lock:
            for log in self._logs.values():
                log.close()
            self._logs.clear()


def _clip(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"… ({len(value) - limit} more chars)"
    return value
