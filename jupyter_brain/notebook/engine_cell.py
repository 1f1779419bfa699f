"""A ``%%agent --engine NAME`` cell: the turn runs through an outside agent over ACP
(``jupyter_brain/engines``) under the cell contract — the same view, the recording in the
output's metadata and the event log (Run All replays it with no agent), ``_agent``, and a
failed turn failing its cell (``turn_failure.py``).
"""

from __future__ import annotations

import os
import types
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..engines import (
    EngineHost,
    EngineNotFound,
    EngineRecording,
    EngineTurn,
    cell_key,
    engine_spec,
    logged_engine_recordings,
    saved_engine_recordings,
)
from ..engines.recording import METADATA_KEY, RECORD_KIND
from ..tools.python_exec import execute
from .cell_identity import current_cell_id
from .headless import is_headless
from .kernel_inputs import approver_for
from .replay import cell_source, kernel_notebooks, replay_mode
from .turn_failure import fail_statuses, turn_failure
from .views import agent_view, close_view

_HIDDEN = {"In", "Out", "exit", "quit", "get_ipython", "open"}
_noted: set[str] = set()  # engines whose "no usage reported" note was printed (once per kernel)


def engine_host(magics: Any) -> EngineHost:
    """The kernel's ACP host (its agent processes and sessions), made on first use."""
    host = getattr(magics, "_engine_host", None)
    if host is None:
        workspace = Path(str(getattr(magics, "workspace_dir", "") or "") or os.getcwd())
        host = EngineHost(workspace if workspace.is_absolute() else Path.cwd() / workspace)
        magics._engine_host = host
    return host


def kernel_tool(user_ns: dict[str, Any]) -> Any:
    """The kernel's MCP tools, run on the cell's thread in the live namespace."""
    def run(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        if name == "execute_code":
            return execute(str(arguments.get("code") or ""), user_ns), False  # a traceback is its text
        if name == "list_variables":
            rows = [f"{k}: {type(v).__name__}" for k, v in user_ns.items()
                    if not k.startswith("_") and k not in _HIDDEN and not isinstance(v, types.ModuleType)
                    and not callable(v)]
            return "\n".join(rows) or "(no variables)", False
        key = str(arguments.get("name") or "")
        if key not in user_ns:
            return f"no variable {key!r}", True
        value = user_ns[key]
        shape = getattr(value, "shape", None)
        return (f"{key}: {type(value).__name__}" + (f", shape {shape}" if shape is not None else "")
                + f"\n{repr(value)[:2000]}"), False
    return run


def run_engine_cell(magics: Any, args: Any, options: Any, line: str, cell: str, prompt: str, session: Any) -> Any:
    """One turn of the engine ``options.engine``; returns its ``TurnResult`` (also in ``_agent``)."""
    try:
        spec = engine_spec(options.engine, dict(getattr(magics, "engines", {}) or {}))
    except EngineNotFound as exc:
        raise UsageError(f"%%agent: {exc}") from None
    user_ns = magics.shell.user_ns if magics.shell is not None else {}
    key = cell_key(cell_source(line, cell))
    mode = replay_mode(options, args)
    recording = _recording(magics, user_ns, key, spec.name, prompt) if mode != "off" else None
    if recording is None and mode == "strict":
        raise UsageError(f"%%agent: --replay strict: no recording of this cell matches ({spec.name}, this prompt)")
    headless = is_headless(magics.shell)
    view = agent_view(magics.shell, fold=magics.fold)
    event_log = magics.manager.event_log
    try:
        outcome = engine_host(magics).run(EngineTurn(
            spec=spec, prompt=prompt, session=session.name, permission=options.permission,
            approver=approver_for(view, magics.approval_timeout, headless=headless),
            approval_timeout_s=magics.approval_timeout, timeout_s=options.timeout, event_log=event_log,
            on_event=view.handle, kernel_tool=kernel_tool(user_ns), new_session=bool(args.new),
            replay=recording, cell=key, cell_id=current_cell_id(magics.shell) or "", max_cost=options.max_cost_per_turn, max_tokens=options.max_tokens_per_turn))
    except EngineNotFound as exc:
        close_view(view)
        raise UsageError(f"%%agent: {exc}") from None
    if outcome.recording.items and recording is None:
        view.output_metadata = {"jupyter_brain": {METADATA_KEY: outcome.recording.dump()}}
        try:
            event_log.add_record(RECORD_KIND, {"cell": key, "recording": outcome.recording.dump()}, session.name)
        except Exception:  # noqa: BLE001 - a full disk loses the log's copy, not the turn
            pass
    close_view(view)
    if outcome.caps_note and spec.name not in _noted:
        _noted.add(spec.name)
        print(outcome.caps_note)
    result = outcome.result
    user_ns["_agent"] = result
    if args.out and args.out.isidentifier():
        user_ns[args.out] = result
    failure = turn_failure(result, fail_statuses(getattr(magics, "fail_on", None)), options=options)
    if failure is not None:
        raise failure
    return None


def _recording(magics: Any, user_ns: dict[str, Any], key: str, engine: str, prompt: str) -> EngineRecording | None:
    """The first recording of this cell (saved notebook by cell id, the log, saved by source)
    made by the same engine from the same prompt."""
    saved = saved_engine_recordings(kernel_notebooks(magics, user_ns), current_cell_id(magics.shell), key)
    logged = logged_engine_recordings(magics.manager.event_log, key)
    return next((r for r in [*saved[:1], *logged, *saved[1:]] if r.matches(engine, prompt)), None)
