"""Running an exported turn (``%agent export-test``): the test file's one call (#27).

A fresh in-process IPython loads jupyter_brain with its data folder in the test's
``tmp_path`` (the user's event log is never touched), applies the kernel's settings, runs
the setup cells, seeds the session with the history the turn was sent, puts the turn's
recording into the fresh event log under the cell's key, and runs the ``%%agent`` cell:
with ``--replay strict`` (the recording answers every call, or the turn stops saying what
changed) or, live, with ``--rerun``. What the turn gave back is an ``ExportedTurnRun``
whose ``assert_*`` methods raise ``AssertionError`` with one line saying why.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SESSION = "exported-turn"
EMPTY_NOTEBOOK = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@dataclass
class ExportedTurnRun:
    """What the re-run turn gave: its answer, status, replay state and the namespace it left."""

    answer: str
    status: str
    replay: str
    live: bool
    namespace: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    setup_errors: list[str] = field(default_factory=list)

    def _fail(self, why: str) -> None:
        __tracebackhide__ = True  # pytest shows the test's line, not this one
        notes = f" (setup cells that failed: {'; '.join(self.setup_errors)})" if self.setup_errors else ""
        raise AssertionError(why + notes)

    def assert_ran(self) -> None:
        """Replay: every model call came from the recording. Live: the turn completed."""
        __tracebackhide__ = True
        if self.status != "completed":
            self._fail(f"the turn ended {self.status!r}: {self.error or 'no answer'}")
        if not self.live and self.replay != "replayed":
            self._fail(f"the turn was not replayed from its recording ({self.replay or 'no model call'})")

    def assert_answer(self, recorded: str) -> None:
        """The answer is the recorded one (spacing at the ends aside)."""
        __tracebackhide__ = True
        if self.answer.strip() != recorded.strip():
            self._fail(f"the answer changed: expected {_clip(recorded)!r}, got {_clip(self.answer)!r}")

    def assert_expect(self, text: str) -> None:
        """``--expect TEXT`` on the answer (numbers with a tolerance: ``jupyter_brain.evals``)."""
        __tracebackhide__ = True
        from ..evals import ExpectCheck

        verdict = ExpectCheck(text).evaluate(self.answer, {})
        if not verdict.passed:
            self._fail(verdict.reason)

    def assert_check(self, expression: str) -> None:
        """``--check EXPR`` in the namespace the turn left, with ``answer`` bound to its text."""
        __tracebackhide__ = True
        from ..evals import ExprCheck

        verdict = ExprCheck(expression).evaluate(self.answer, self.namespace)
        if not verdict.passed:
            self._fail(f"--check {expression}: {verdict.reason}")


def _clip(text: str, n: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def run_exported_turn(case_path: str | os.PathLike[str], flags: str, prompt: str, setup: Sequence[str],
                      config: Mapping[str, Any], *, workdir: str | os.PathLike[str], live: bool = False) -> ExportedTurnRun:
    """Run the exported turn once (see the module's docstring)."""
    from IPython.core.interactiveshell import InteractiveShell

    case = json.loads(Path(case_path).read_text(encoding="utf-8"))
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    notebook = work / "exported.ipynb"  # the only notebook searched for recordings: none in it
    notebook.write_text(json.dumps(EMPTY_NOTEBOOK), encoding="utf-8")
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    try:
        shell.run_line_magic("load_ext", "jupyter_brain")
        magics = shell.magics_manager.registry["AgentMagics"]
        magics.data_dir = str(work / "data")
        magics.notebook = str(notebook)
        for key, value in config.items():
            setattr(magics, key, value)
        setup_errors = [_run_setup(shell, n, cell) for n, cell in enumerate(setup, start=1)]
        seed_session(magics, case.get("history") or [], case.get("recording") or {}, flags, prompt)
        return _run_cell(shell, flags, prompt, live, [e for e in setup_errors if e])
    finally:
        _close(shell)


def _run_setup(shell: Any, number: int, cell: str) -> str:
    """One setup cell; what went wrong, on one line ("" when it ran)."""
    result = shell.run_cell(cell, store_history=True)
    error = result.error_before_exec or result.error_in_exec
    return "" if error is None else f"cell {number}: {type(error).__name__}: {_clip(str(error), 120)}"


def seed_session(magics: Any, history: Sequence[dict[str, Any]], recording: Mapping[str, Any],
                 flags: str, prompt: str) -> None:
    """The session the turn ran in, as it was (its history), and the turn's recording in the
    fresh event log under the key of the cell that runs (the file's FLAGS and PROMPT)."""
    from ..providers.replay import cell_key
    from .replay import cell_source

    manager = magics.manager
    manager.event_log.replace_history(SESSION, list(history))
    manager.use(SESSION)
    key = cell_key(cell_source(flags, prompt))
    manager.event_log.add_record("recording", {"cell": key, "recording": {**recording, "cell": key}})


def _run_cell(shell: Any, flags: str, prompt: str, live: bool, setup_errors: list[str]) -> ExportedTurnRun:
    from IPython.core.error import UsageError

    from .turn_failure import AgentTurnFailed

    shell.user_ns.pop("_agent", None)
    error = ""
    try:
        shell.run_cell_magic("agent", f"{flags} {'--rerun' if live else '--replay strict'}".strip(), prompt)
    except (AgentTurnFailed, UsageError) as exc:
        error = str(exc)
    result = shell.user_ns.get("_agent")
    if result is None:
        return ExportedTurnRun("", "error", "", live, dict(shell.user_ns), error or "the cell ran no turn",
                               setup_errors)
    return ExportedTurnRun(result.text, str(result.status), result.replay, live, dict(shell.user_ns),
                           error or result.error or "", setup_errors)


def _close(shell: Any) -> None:
    """Let the shell go: its event log closed, the extension unloaded, its clean-up undone."""
    import atexit

    from IPython.core.interactiveshell import InteractiveShell

    magics = shell.magics_manager.registry.get("AgentMagics")
    with contextlib.suppress(Exception):
        if magics is not None and magics._manager is not None:
            magics._manager.event_log.close()
    with contextlib.suppress(Exception):
        shell.run_line_magic("unload_ext", "jupyter_brain")
    with contextlib.suppress(Exception):
        atexit.unregister(shell.atexit_operations)
        shell.history_manager.save_thread.stop()
    InteractiveShell.clear_instance()


__all__ = ["ExportedTurnRun", "run_exported_turn", "seed_session"]
