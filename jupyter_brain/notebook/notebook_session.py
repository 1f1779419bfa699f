"""Which session a kernel starts in: a fresh one, named after its notebook.

A notebook's conversation is kernel state, like its variables: a fresh kernel (a restart,
Run All in nbconvert or papermill) starts a fresh session instead of silently continuing
what an earlier run left in ``.jupyter_brain/``. The session is named after the notebook
(``JPY_SESSION_NAME``, which jupyter-server sets for a notebook's kernel, or VS Code's
``__vsc_ipynb_file__``), ``default`` where no notebook is known; when an earlier kernel
used that name, the next free ``NAME-2``, ``NAME-3`` … is taken (claimed in the log's
database, so two kernels starting together do not share one). Continuing an earlier
session is explicit, ``%agent use NAME`` or ``%%agent --session NAME``, and visible:
"continuing session NAME (N turns)".
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import Any

from ..agent.events.database import Database

SCHEMA = "CREATE TABLE IF NOT EXISTS session_claims (name TEXT PRIMARY KEY, ts REAL NOT NULL);"
DEFAULT = "default"


def notebook_path(user_ns: Mapping[str, Any], environ: Mapping[str, str] = os.environ) -> str | None:
    """The notebook this kernel runs, where the front-end says so."""
    path = user_ns.get("__vsc_ipynb_file__") or environ.get("JPY_SESSION_NAME")
    return str(path) if path else None


def session_base(path: str | None) -> str:
    """A session name from a notebook's file name: ``Sales Q3.ipynb`` -> ``Sales-Q3``."""
    if not path:
        return DEFAULT
    stem = PurePath(path.replace("\\", "/")).stem
    name = re.sub(r"\s+", "-", stem.strip())[:60].strip("-")
    return name or DEFAULT


def fresh_session(base: str) -> Callable[[Any], str]:
    """For ``SessionManager(first_session=...)``: ``base``, or the next free ``base-N``."""
    return lambda event_log: claim_fresh_name(event_log, base)


def claim_fresh_name(event_log: Any, base: str) -> str:
    """The first of ``base``, ``base-2``, … that no earlier kernel used, claimed for this one."""
    db = Database(event_log, SCHEMA)
    with db.lock:
        conn = db.connection
        conn.execute("BEGIN IMMEDIATE")  # check and claim in one step, across processes
        try:
            n = 1
            while True:
                name = base if n == 1 else f"{base}-{n}"
                if not _used(conn, name):
                    conn.execute("INSERT INTO session_claims(name, ts) VALUES (?, ?)", (name, time.time()))
                    conn.execute("COMMIT")
                    return name
                n += 1
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _used(conn: Any, name: str) -> bool:
    for table, column in (("session_claims", "name"), ("turns", "session_id"), ("messages", "session_id")):
        if conn.execute(f"SELECT 1 FROM {table} WHERE {column} = ? LIMIT 1", (name,)).fetchone():
            return True
    return False


def kernel_session(shell: Any) -> Callable[[Any], str]:
    """The first session of this kernel: fresh, named after the notebook."""
    return fresh_session(kernel_base(shell))


def kernel_base(shell: Any) -> str:
    return session_base(notebook_path(getattr(shell, "user_ns", None) or {}))


def session_notice(session: Any, base: str) -> str | None:
    """One line, once per session and kernel: "continuing session X (N turns)" when this
    kernel picked up earlier turns; or, for a fresh ``base-N``, that earlier runs exist."""
    if getattr(session, "notice_shown", False):
        return None
    session.notice_shown = True
    turns = getattr(session, "resumed_turns", 0)
    if turns:
        return f"continuing session {session.name} ({turns} turn{'s' * (turns != 1)} from the event log)"
    if session.name.startswith(f"{base}-") and not session.history:
        return (f"new session {session.name}: this kernel does not continue earlier runs "
                f"(%agent sessions lists them, %agent use NAME continues one)")
    return None
