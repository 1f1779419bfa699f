"""The kernel's side of the JupyterLab extension: one comm, and the fallbacks without it.

The extension registers the comm target ``jupyter_brain.lab``; ``%load_ext`` opens a comm
to it and the extension answers ``ready``. After a page reload (or when a notebook connects
to a kernel that already loaded us) the extension opens a comm to the kernel's target
``jupyter_brain.kernel`` instead. Only a front-end that said ``ready`` counts as present:
VS Code, Colab, Notebook 7 without the extension, terminal IPython and nbconvert never do,
so every feature falls back (``set_next_input`` cells, ``%agent fix`` text) and nothing
here raises into a cell. Payloads are built in ``lab_payloads.py`` from masked events.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from ..foundation.version import __version__
from .headless import request_cell_id as current_cell_id  # JupyterLab's id of the running cell

log = logging.getLogger(__name__)

FRONTEND_TARGET = "jupyter_brain.lab"  # registered by the extension
KERNEL_TARGET = "jupyter_brain.kernel"  # registered here, for comms the extension opens
# How long after %load_ext opened its comm a turn's end waits for the extension's answer.
# The status bar needs no wait (its figures are pushed when "ready" comes), so a turn
# gives it little; ``--cells`` must know, or its cells take the one-cell fallback: a
# loaded browser can take seconds to answer, and JupyterLab without the extension closes
# the comm at once, which ends the wait.
SETTLE_S = 1.5
CELLS_SETTLE_S = 20.0


class LabChannel:
    """The comm with the extension, if one is there; ``present`` says whether it is."""

    def __init__(self, magics: Any, *, create_comm: Callable[..., Any] | None = None,
                 comm_manager: Any = None, pump: Callable[[], Any] | None = None) -> None:
        self.magics = magics
        self.comm: Any = None
        self.version: str | None = None  # the extension's, once it said ready
        self._create_comm = create_comm
        self._comm_manager = comm_manager
        self._pump = pump
        self._opened_at: float | None = None  # when %load_ext opened its comm (time.monotonic)
        self.settle_skipped = 0  # first turns that did not wait: a headless kernel (notebook/headless.py)
        self._routed: Any = None  # the comm whose "ready" a kernel subshell handles
        # What happened on this channel, oldest first ("+1.20s subshell-…: ready 0.4.0"):
        # why a --cells turn took the one-cell fallback, when a report needs to say so.
        self.trail: deque[str] = deque(maxlen=32)
        self._t0 = time.monotonic()

    def _note(self, what: str) -> None:
        line = f"+{time.monotonic() - self._t0:.2f}s {threading.current_thread().name}: {what}"
        self.trail.append(line)
        log.debug("jupyter_brain lab channel %s", line)

    @property
    def present(self) -> bool:
        return self.comm is not None and self.version is not None

    # opening ---------------------------------------------------------------------
    def start(self) -> None:
        """At ``%load_ext``: listen for the extension's comms and open one to it. Without
        a kernel (terminal IPython, tests) there is nothing to do.

        In a real kernel the comm is routed to a subshell *before* it is opened: the
        extension answers within milliseconds, and a ``ready`` that reached the kernel
        before the routing went to the main shell, behind Run All's queued cells, where
        no turn could see it (creating the subshell can take longer than that answer on
        a loaded machine: fresh-clone CI got the one-cell fallback from it)."""
        if getattr(self.magics.shell, "kernel", None) is None and self._create_comm is None:
            return
        hello = {"type": "hello", "version": __version__}
        routed_comms: list[Any] = []
        try:
            _create, manager = self._comm_api()
            manager.register_target(KERNEL_TARGET, self._on_open)
            with contextlib.ExitStack() as stack:
                if self._create_comm is None:  # a real kernel: routed before the comm opens
                    from .kernel_channel import comms_routed_from_the_start

                    routed_comms = stack.enter_context(comms_routed_from_the_start())
                create, _ = self._comm_api()  # comm.create_comm as the block has it
                comm = create(target_name=FRONTEND_TARGET, data=hello)
        except Exception as exc:  # noqa: BLE001 - the extension is optional; the fallbacks work without it
            log.debug("jupyter_brain: no comm with the JupyterLab extension (%s)", exc)
            return
        routed = any(made is comm for made in routed_comms)
        self._routed = comm if routed else None
        self._opened_at = time.monotonic()
        self._note(f"opened the comm to the extension ({'on a subshell' if routed else 'on the main shell'})")
        self._adopt(comm, None)  # an answer that came already is handed over here

    def stop(self) -> None:
        comm, self.comm, self.version = self.comm, None, None
        if comm is not None:
            with contextlib.suppress(Exception):
                comm.close()

    def _comm_api(self) -> tuple[Callable[..., Any], Any]:
        if self._create_comm is not None:
            return self._create_comm, self._comm_manager
        import comm

        return comm.create_comm, comm.get_comm_manager()

    def _on_open(self, comm: Any, msg: dict[str, Any]) -> None:
        """The extension opened a comm to us (page reload, notebook connected)."""
        data = _data(msg)
        self._adopt(comm, str(data.get("version") or "?"))
        self._note(f"the extension opened a comm (version {self.version})")
        self._push_status()

    def _adopt(self, comm: Any, version: str | None) -> None:
        old = self.comm
        self.comm, self.version = comm, version
        comm.on_msg(self._on_msg)
        comm.on_close(lambda _msg, c=comm: self._closed(c))
        if old is not None and old is not comm:
            with contextlib.suppress(Exception):
                old.close()

    def _closed(self, comm: Any) -> None:
        if comm is self.comm:  # the front-end went away, or never had the target
            self.comm, self.version = None, None
            self._note("the front-end closed the comm")

    def settle(self, timeout_s: float = SETTLE_S) -> None:
        """Wait for the answer to the comm ``%load_ext`` opened, until ``timeout_s`` after
        it was opened: under Run All (on a kernel without subshells) the extension's
        ``ready`` queues behind the next cells, so pending messages are processed
        (``jupyter_ui_poll``, as approvals do) until it comes, or the comm is closed (no
        extension), or the time is up. A headless kernel (nbconvert, papermill: nobody is
        there to answer) and Colab (no JupyterLab extension there) do not wait."""
        if self.comm is None or self.version is not None or self._opened_at is None:
            return
        from .headless import is_headless

        if is_headless(self.magics.shell) or "google.colab" in sys.modules:
            self.settle_skipped += 1
            self._opened_at = None  # nobody will answer: no later turn waits either
            return
        deadline = self._opened_at + timeout_s
        if time.monotonic() >= deadline:
            self._note(f"no answer from the extension within {timeout_s:g} s of %load_ext")
            return
        from .approval import _Pumping

        routed = self._pump or ((lambda: None) if self._routed is not None else None)  # a subshell handles it
        with _Pumping(routed) as pump:
            while self.comm is not None and self.version is None and time.monotonic() < deadline:
                pump()
                time.sleep(0.02)
        self._note("waited for the extension: " + (
            "it answered" if self.present else "the comm was closed" if self.comm is None
            else f"no answer within {timeout_s:g} s of %load_ext"))

    # kernel -> front-end ---------------------------------------------------------------
    def send(self, payload: dict[str, Any]) -> bool:
        """Send when the extension is there; False (never an error) when it is not. Every
        string is masked first (the configured keys, the key variables, known key formats):
        code and outputs go into the notebook."""
        if not self.present:
            return False
        from ..agent.redact import redact_value  # not at %load_ext: the agent core loads with the first cell

        try:
            self.comm.send(redact_value(payload, self._redactor()))
        except Exception as exc:  # noqa: BLE001 - a closed socket must not fail the cell
            log.warning("jupyter_brain: the JupyterLab extension did not get a message (%s)", exc)
            return False
        return True

    def _redactor(self) -> Callable[[str], str]:
        manager = getattr(self.magics, "_manager", None)
        harness = getattr(getattr(manager, "current", None), "last_harness", None) if manager else None
        if getattr(harness, "redactor", None) is not None:
            return harness.redactor
        from ..agent.redact import Redactor

        return Redactor()

    def after_turn(self, session: Any, result: Any, *, cells: bool, prompt: str) -> None:
        """After each ``%%agent`` turn: the status bar's figures; with ``--cells``, one cell
        per ``run_python`` call below the agent cell, or the one-cell fallback."""
        from .lab_payloads import cells_message, status_message

        self.settle(CELLS_SETTLE_S if cells else SETTLE_S)
        try:
            self.send(status_message(session))
        except Exception as exc:  # noqa: BLE001 - the status bar is optional
            log.warning("jupyter_brain: status for the JupyterLab extension failed (%s)", exc)
        if not cells:
            return
        cell_id = current_cell_id(self.magics.shell)
        if self.present and cell_id:
            try:
                events = self.magics.manager.event_log.events(turn_id=result.turn_id)
                message = cells_message(result, events, cell_id)
            except Exception as exc:  # noqa: BLE001 - fall back to the portable way below
                log.warning("jupyter_brain: code cells for the extension failed (%s)", exc)
            else:
                if not message["cells"]:
                    print("--cells: the agent ran no code this turn, so no cell was added.")
                    return
                if self.send(message):
                    self._note(f"--cells: sent {len(message['cells'])} cell(s) to the extension")
                    return
        self._note(f"--cells: the one-cell fallback (extension {'present' if self.present else 'absent'}, "
                   f"cell id {'known' if cell_id else 'unknown'})")
        from .code_cells import insert_code_cell

        insert_code_cell(self.magics.shell, result, prompt)

    def _push_status(self) -> None:
        """A front-end that connects after turns ran (a page reload, or a ``ready`` that came
        after the first turns of a Run All) gets the status bar's figures now, not only at
        the next turn: otherwise it says "no turn yet" over a notebook full of turns."""
        manager = getattr(self.magics, "_manager", None)  # not created just for this
        session = getattr(manager, "current", None) if manager is not None else None
        if session is None or not getattr(session, "results", None):
            return
        from .lab_payloads import status_message

        try:
            self.send(status_message(session))
        except Exception as exc:  # noqa: BLE001 - the status bar is optional
            log.warning("jupyter_brain: status for the JupyterLab extension failed (%s)", exc)

    # front-end -> kernel -----------------------------------------------------------------
    def _on_msg(self, msg: dict[str, Any]) -> None:
        data = _data(msg)
        kind = data.get("type")
        if kind == "ready":
            self.version = str(data.get("version") or "?")
            self._note(f"the extension answered ready (version {self.version})")
            if self._routed is not None:  # requests (a fix runs a turn) belong on the main thread
                # (what kernel_channel._route set on the comm)
                for routing in ("_reply_subshell_for", "handle_msg", "on_msg", "handle_close", "on_close"):
                    self._routed.__dict__.pop(routing, None)
                self._routed = None
            self._push_status()
            return
        handler = {"status": self._reply_status, "inspect": self._reply_inspect, "fix": self._reply_fix,
                   "mark_best": self._reply_mark_best}.get(str(kind))
        if handler is None:
            return
        request_id = data.get("request_id")
        try:
            reply = handler(data)
        except Exception as exc:  # noqa: BLE001 - the front-end shows the message instead of hanging
            reply = {"error": _error_text(exc)}
        self.send({"type": f"{kind}_reply", "request_id": request_id, **reply})

    def _reply_status(self, data: dict[str, Any]) -> dict[str, Any]:
        from .subcommands.status import cmd_status

        return {"text": _captured(lambda: cmd_status(self.magics, []))}

    def _reply_inspect(self, data: dict[str, Any]) -> dict[str, Any]:
        from .subcommands.inspect_request import NOT_KEPT, turn_snapshot

        session = self.magics.manager.current
        if not session.turns():
            return {"error": f"session {session.name} has no turns yet"}
        turn, snap = turn_snapshot(session)
        if snap is None:
            return {"error": f"turn {turn.index + 1}: {NOT_KEPT}"}
        return {"snapshot": snap.model_dump(mode="json", by_alias=True),
                "total_tokens": snap.total_tokens, "turn": turn.index + 1}

    def _reply_mark_best(self, data: dict[str, Any]) -> dict[str, Any]:
        """"Mark best" on a finished comparison (the extension's view of its saved output):
        a ``decision`` record, as the live view's button and ``%agent compare-best`` make."""
        from ..compare import record_decision

        comparison_id, strategy = str(data.get("comparison_id") or ""), str(data.get("strategy") or "")
        given = data.get("run")
        run = given if isinstance(given, int) else 1
        log = self.magics.manager.event_log
        known = next((c for c in log.records("comparison") if c.get("comparison_id") == comparison_id), None)
        if known is None:
            return {"error": f"This comparison ran in an earlier session, not in this kernel's log: run the "
                             f"cell again, or %agent compare-best {strategy} for a later one."}
        if strategy not in known.get("strategies", []):
            return {"error": f"{strategy!r} is not in this comparison"}
        return {"decision": record_decision(log, comparison_id, strategy, run=run, source="user")}

    def _reply_fix(self, data: dict[str, Any]) -> dict[str, Any]:
        """Run ``%agent fix`` for one failing cell; the proposed cell comes back as data."""
        from .agent_cell import run_agent_cell
        from .fix import ProposedFix, fix_prompt, pick_error, proposed_code

        count = data.get("execution_count")
        rest = [str(count)] if isinstance(count, int) and count > 0 else []
        error = pick_error(self.magics.cell_errors, rest)
        shell = self.magics.shell
        user_ns = shell.user_ns if shell is not None else {}
        _captured(lambda: run_agent_cell(self.magics, "", fix_prompt(error, user_ns), interpolate_prompt=False))
        answer = getattr(user_ns.get("_agent"), "text", "") or ""
        code = proposed_code(answer)
        base = {"cell_id": data.get("cell_id"), "execution_count": error.execution_count,
                "error_type": error.error_type}
        if code is None:
            return {**base, "error": "The agent did not propose a corrected cell (no ```python block)."}
        fix = ProposedFix(error.execution_count, error.source, code)
        self.magics.last_fix = fix  # %agent fix --apply works after the button too
        return {**base, "original": fix.original, "fixed": fix.fixed, "diff": fix.diff(),
                "explanation": answer.split("```")[0].strip()[:2000]}


def _data(msg: dict[str, Any]) -> dict[str, Any]:
    data = (msg or {}).get("content", {}).get("data")
    return data if isinstance(data, dict) else {}


def _captured(fn: Callable[[], Any]) -> str:
    """What ``fn`` prints (a subcommand's text), instead of into an output nobody shows."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn()
    return out.getvalue()


def _error_text(exc: BaseException) -> str:
    from IPython.core.error import UsageError

    return str(exc) if isinstance(exc, UsageError) else f"{type(exc).__name__}: {exc}"
