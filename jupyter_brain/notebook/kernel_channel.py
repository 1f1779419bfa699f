"""Letting a widget's front-end messages reach the kernel while a cell is running.

A ``%%agent`` cell blocks the kernel's main thread for the whole turn, and the main
thread is where ipykernel handles shell messages: a click on an approval button would
wait until the cell ended. Two ways through, newest kernel first:

* ipykernel ≥ 7 has *subshells* (JEP 91): extra shell threads with their own event loop,
  and it routes a comm's messages to the subshell named by the comm's
  ``_reply_subshell_for``. ``route_to_subshell(widget)`` creates one subshell per kernel
  and points the widget's comm at it, so its messages are handled on that thread at
  once, whatever the main thread is doing.
* older kernels: ``jupyter_ui_poll`` processes pending messages from inside the cell
  (see ``jupyter_brain.notebook.approval``).

Both lean on kernel internals; every step is guarded and a failure only means the
caller falls back (to pumping, then to stdin).

A routed comm handles its messages *without* the shell's ``pre_execute`` and
``post_execute`` events, which the ``comm`` package fires around every message callback
so that a widget callback behaves like a small cell. On a subshell that callback runs
while the cell runs on the main thread, and those events belong to that cell: the inline
matplotlib backend's ``post_execute`` hook shows and *closes every open figure*, so an
approval click or the extension's ``ready`` arriving mid-``run_python`` closed the figure
the agent's code had just drawn, before the tool could capture it (the figure was lost:
shown on the subshell's message, which no cell displays). Our callbacks draw nothing.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

log = logging.getLogger("jupyter_brain.notebook.kernel_channel")

_lock = threading.Lock()
_subshells: dict[int, str] = {}  # id(kernel) -> the subshell id created for widget messages


# ipykernel >= 7 closes a subshell's event loop when a front-end deletes the subshell
# (JupyterLab opens and deletes subshells for its comms); a message that arrived just then
# leaves its handler coroutine unscheduled, and Python's "coroutine ... was never awaited"
# RuntimeWarning lands, red, under whichever cell runs at the time. Nothing the user can do;
# seen once in fresh-clone CI (sessions.ipynb). Only that one coroutine's warning is hidden.
SUBSHELL_TEARDOWN_WARNING = r"coroutine '_async_in_context\.<locals>\.run_in_context' was never awaited"


def quiet_subshell_teardown_warning() -> None:
    warnings.filterwarnings("ignore", message=SUBSHELL_TEARDOWN_WARNING, category=RuntimeWarning)


def _kernel() -> Any | None:
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except Exception:  # noqa: BLE001
        return None
    return getattr(shell, "kernel", None) if shell is not None else None


def _subshell_id(kernel: Any) -> str | None:
    """The kernel's widget subshell, created on first use (None if unsupported or refused:
    then the caller falls back, and the reason goes to this module's log, not the cell)."""
    if not getattr(kernel, "_supports_kernel_subshells", False):
        return None
    with _lock:
        known = _subshells.get(id(kernel))
        if known is not None:
            return known
        try:
            made = _create_subshell(kernel)
        except Exception as exc:  # noqa: BLE001 - a kernel without this machinery, or a slow one
            log.info("no kernel subshell for widget messages (%s: %s); they wait for the main thread",
                     type(exc).__name__, exc)
            return None
        _subshells[id(kernel)] = made
        return made


def _create_subshell(kernel: Any, timeout: float = 5.0) -> str:
    """A new subshell, made on the kernel's shell channel thread as ipykernel makes one.

    Not through ``control_to_shell_channel``, the inproc PAIR socket ipykernel's control
    thread sends ``create``/``delete``/``list`` requests on and reads each answer back
    from: a second sender there (this code once was one) and the two threads read each
    other's answers whenever a front-end's subshell request was in flight (JupyterLab
    opens and deletes subshells for its comms), e.g. a delete's ``{'status': 'ok'}`` for
    our create (#40). Here the answer comes back through a future only this call holds.
    """
    thread = kernel.shell_channel_thread
    manager = thread.manager
    answer: Future[str] = Future()

    def create() -> None:  # on the shell channel thread
        if not answer.set_running_or_notify_cancel():
            return  # given up on: make none
        try:
            answer.set_result(str(manager._create_subshell()))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            answer.set_exception(exc)

    thread.io_loop.add_callback(create)
    try:
        return answer.result(timeout=timeout)
    except TimeoutError:  # concurrent.futures' own since Python 3.11
        answer.cancel()
        raise TimeoutError(f"the shell channel thread did not answer in {timeout:.0f} s") from None


def route_to_subshell(widget: Any) -> bool:
    """Handle ``widget``'s front-end messages on a kernel subshell thread.

    Returns False where the kernel cannot (no kernel, ipykernel < 7, subshells off):
    then messages arrive only when the main thread is free or pumped.
    """
    kernel = _kernel()
    comm = getattr(widget, "comm", None)
    if kernel is None or comm is None or not hasattr(comm, "_reply_subshell_for"):
        return False
    subshell = _subshell_id(kernel)
    if subshell is None:
        return False
    _route(comm, subshell)
    return True


def _route(comm: Any, subshell: str) -> None:
    # An instance attribute shadows the method that ipykernel consults for each comm
    # message; the method's own default follows the last publisher, which is the main
    # shell here (the live batches), so it cannot be used as is.
    comm._reply_subshell_for = lambda data, default: subshell
    comm.handle_msg, comm.on_msg = _held_until_set(comm, "_msg_callback")  # without the cell events
    comm.handle_close, comm.on_close = _held_until_set(comm, "_close_callback")


@contextlib.contextmanager
def comms_routed_from_the_start() -> Iterator[list[Any]]:
    """Within this block, each comm created by ``comm.create_comm`` (looked up on the
    module at call time, as ipywidgets and the lab channel do) is routed to the subshell
    *before* its ``comm_open`` is sent; the list yielded collects them (empty where the
    kernel has no subshells).

    Routing a comm after it opened races its front-end: the extension and the widget
    answer ``ready`` at once, and a message that reaches the kernel before the routing
    goes to the main shell, queued behind the running cell, which is the one waiting for
    it. Fresh-clone CI lost that race when creating the subshell was slow (#23). Meant for
    the main thread, around one construction: the patch is module-wide while it lasts."""
    import comm as comm_package

    kernel = _kernel()
    subshell = _subshell_id(kernel) if kernel is not None else None
    routed: list[Any] = []
    if subshell is None:
        yield routed
        return
    original = comm_package.create_comm

    def create(*args: Any, data: Any = None, metadata: Any = None, buffers: Any = None, **kwargs: Any) -> Any:
        made = original(*args, **{**kwargs, "primary": False})  # registered and opened below
        if hasattr(made, "_reply_subshell_for"):
            _route(made, subshell)
            routed.append(made)
        made.open(data=data, metadata=metadata, buffers=buffers)
        return made

    comm_package.create_comm = create
    try:
        yield routed
    finally:
        comm_package.create_comm = original


def _held_until_set(comm: Any, callback_attribute: str) -> tuple[Any, Any]:
    """A routed comm's ``handle_msg`` (or ``handle_close``) and the ``on_msg`` (``on_close``)
    that goes with it.

    ``handle_msg`` calls the callback without the ``pre_execute``/``post_execute`` events
    that ``comm.base_comm.BaseComm.handle_msg`` fires around it (see the module's doc).
    A message that comes before any callback is set is kept, and handed over when one is
    set: a comm routed before it opens can hear from its front-end on the subshell while
    the main thread is still between opening it and registering its callbacks (ipywidgets
    registers them only after ``create_comm`` returned)."""
    lock = threading.Lock()
    early: list[dict[str, Any]] = []
    held = threading.Event()  # set once a message is kept: what a test waits on

    def handle(msg: dict[str, Any]) -> None:
        with lock:
            callback = getattr(comm, callback_attribute, None)
            if callback is None:
                early.append(msg)
                held.set()
                return
        callback(msg)

    def set_callback(callback: Any) -> None:
        with lock:
            setattr(comm, callback_attribute, callback)
            waiting = early[:] if callback is not None else []
            del early[:len(waiting)]
        for msg in waiting:
            callback(msg)

    handle.held = held  # type: ignore[attr-defined]
    return handle, set_callback
