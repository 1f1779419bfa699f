"""``run_python``: the model runs code in the user's namespace, like a notebook cell.

Decisions, and why:

* **Output capture is per thread.** Tools run in a worker thread while the kernel's
  main thread keeps publishing its own output, so ``contextlib.redirect_stdout`` (which
  swaps the process-wide ``sys.stdout``) would steal the kernel's output and mix two
  concurrent runs. Instead, while any run is active, ``sys.stdout``/``sys.stderr`` are a
  small router that sends writes from a capturing thread to that thread's buffer and
  everything else to the original stream; the original is put back when the last run
  ends (unless someone replaced the router meanwhile). Output from threads the user's
  code starts itself, and from subprocesses writing to file descriptor 1, is not
  captured: it goes to the notebook as usual.
* **Errors are ToolErrors.** A failing run raises ``ToolError`` whose text is the output
  printed so far plus a traceback trimmed to the user's code (machinery frames dropped,
  library frames collapsed), so the executor marks the result as an error and the model
  still reads the full explanation.
* **Runaway code is interrupted.** After ``timeout_s`` a watchdog raises an exception
  inside the running thread (``PyThreadState_SetAsyncExc``); the executor's own timeout
  is a few seconds longer so the model gets the partial output instead of a bare
  timeout. Code blocked inside a C call is only interrupted when the call returns.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import itertools
import linecache
import re
import sys
import threading
import traceback
from typing import Any, TextIO

from jupyter_brain.agent.images import ToolResult
from jupyter_brain.agent.tools import ToolError, ToolSpec, tool

from . import rich_output
from .figures import _close_new_figures, _figure_images, _figure_note, _figure_numbers
from .values_policy import HIDDEN_NOTE, send_outputs, shape_only

OUTPUT_HEAD_CHARS = 4_000
OUTPUT_TAIL_CHARS = 2_000
VALUE_REPR_CHARS = 3_000
TRACEBACK_CHARS = 5_000
TIMEOUT_GRACE_S = 5.0
_FILENAME_PREFIX = "<run_python-"
_counter = itertools.count(1)


def python_tools(namespace: dict[str, Any], *, timeout_s: float = 60) -> list[ToolSpec]:
    """``run_python`` bound to ``namespace`` (the kernel's ``user_ns`` in a notebook).

    ``timeout_s`` is when the watchdog interrupts the code; the executor is told to wait
    ``TIMEOUT_GRACE_S`` longer so the interrupted run can still report its output.
    """
    limit = float(timeout_s)
    if not limit > 0:
        raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")

    @tool(effect="execute", tool_timeout_s=limit + TIMEOUT_GRACE_S, retry_on_timeout=False, always_offered=True)
    def run_python(code: str) -> str | ToolResult:
        """Run Python in the user's namespace, like a new cell (variables persist). Returns the
        output, the last expression's value, figures as images, or the traceback.
        """
        if not send_outputs():  # the admin's policy: names, types and shapes only
            return execute_without_values(code, namespace, timeout_s=limit)
        result = execute_rich(code, namespace, timeout_s=limit)
        return result if (result.images or result.outputs) else result.text  # plain text unless rich

    return [run_python]


def execute_without_values(code: str, namespace: dict[str, Any], *, timeout_s: float = 60) -> str:
    """Run ``code``; say whether it worked and which variables it made or changed (names,
    types, shapes), never its output, values or traceback text."""
    before = {name: id(value) for name, value in namespace.items()}
    try:
        result = execute_rich(code, namespace, timeout_s=timeout_s)
    except ToolError as exc:
        last = str(exc).strip().splitlines()[-1:] or ["error"]
        kind = last[0].split(":", 1)[0]
        raise ToolError(f"The code failed ({kind}); the output and traceback are not sent ({HIDDEN_NOTE}).") from None
    changed = [name for name, value in namespace.items()
               if not name.startswith("_") and before.get(name) != id(value)]
    lines = [f"Ran. Output not sent ({len(result.text)} characters, {len(result.images)} figures; {HIDDEN_NOTE})."]
    lines += [f"- {name}: {type(namespace[name]).__name__} — {shape_only(namespace[name])}" for name in changed[:40]]
    return "\n".join(lines)


def execute(code: str, namespace: dict[str, Any], *, timeout_s: float = 60) -> str:
    """Run ``code`` in ``namespace`` and describe what happened; raise ToolError on failure."""
    return execute_rich(code, namespace, timeout_s=timeout_s).text


def execute_rich(code: str, namespace: dict[str, Any], *, timeout_s: float = 60) -> ToolResult:
    """``execute``, with the figures the code created attached as PNG images (and, when a
    widget view shows the call, its rich outputs: see ``rich_output``)."""
    source = _transform_magics(code)
    filename = f"{_FILENAME_PREFIX}{next(_counter)}>"
    body, last = _compile(source, filename)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)

    figures_before = _figure_numbers()
    capture = _Capture()
    in_view = rich_output.in_view()
    outputs = rich_output.OutputCapture() if in_view else None
    shown: str | None = None
    error: BaseException | None = None
    timed_out = False
    with capture, (outputs if outputs is not None else contextlib.nullcontext()):
        watchdog = _Watchdog(threading.get_ident(), timeout_s)
        try:
            try:
                watchdog.start()
                exec(body, namespace)
                if last is not None:
                    value = eval(last, namespace)
                    if value is not None and not source.rstrip().endswith(";"):
                        shown = _safe_repr(value)  # inside the watchdog: a repr can be slow too
                        if outputs is not None:
                            outputs.add(rich_output.value_output(value))
            finally:
                watchdog.finish()
        except _ExecutionTimeout:
            timed_out = True
        except BaseException as exc:  # noqa: BLE001 - user code may raise SystemExit or KeyboardInterrupt too
            error = exc

    parts = capture.render()
    parts += _figure_note(figures_before)
    images = _figure_images(figures_before) if not (timed_out or error) else []
    if in_view and images:  # the view shows them in the call's row: not again below the widget
        _close_new_figures(figures_before)
    if timed_out:
        parts.append(f"Execution stopped: run_python took longer than {timeout_s:g} s.")
        raise ToolError("\n".join(parts))
    if error is not None:
        parts.append(format_user_traceback(error))
        raise ToolError("\n".join(parts))
    if shown is not None:
        parts.append("Out: " + _clip(shown, VALUE_REPR_CHARS))
    return ToolResult("\n".join(parts) if parts else "(no output)", images,
                      outputs.result() if outputs is not None else [])


# compiling ---------------------------------------------------------------------
def _compile(source: str, filename: str) -> tuple[Any, Any]:
    """Compile the cell; the last statement in 'eval' mode if it is an expression (as IPython does)."""
    try:
        tree = ast.parse(source, filename=filename, mode="exec")
    except SyntaxError as exc:
        raise ToolError(_syntax_message(exc, source)) from None
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = compile(ast.Expression(tree.body.pop().value), filename, "eval")
    try:
        return compile(tree, filename, "exec"), last
    except SyntaxError as exc:  # e.g. 'return' outside function, found only when compiling
        raise ToolError(_syntax_message(exc, source)) from None


def _syntax_message(exc: SyntaxError, source: str) -> str:
    line, col = exc.lineno or 0, exc.offset or 0
    lines = source.splitlines()
    text = exc.text if exc.text is not None else (lines[line - 1] if 0 < line <= len(lines) else "")
    message = f"{type(exc).__name__}: {exc.msg} (line {line}, column {col})"
    if text:
        stripped = text.rstrip("\n")
        indent = len(stripped) - len(stripped.lstrip())
        message += f"\n    {stripped.strip()}\n    {' ' * max(col - 1 - indent, 0)}^"
    if re.search(r"^\s*[%!]", source, re.MULTILINE):
        message += (
            "\nIPython magics (%...) and shell escapes (!...) only work inside a running IPython kernel; "
            "use plain Python here."
        )
    return message


def _transform_magics(code: str) -> str:
    """Let %magics and !commands work when an IPython shell is running; plain code otherwise."""
    if not re.search(r"^\s*[%!]", code, re.MULTILINE) or "IPython" not in sys.modules:
        return code
    try:
        from IPython import get_ipython  # lazy: only inside a kernel that already loaded IPython

        shell = get_ipython()
        return shell.transform_cell(code) if shell is not None else code
    except Exception:  # noqa: BLE001 - a cell IPython cannot transform runs as written (and fails visibly)
        return code


# output capture ----------------------------------------------------------------
class _Buffer:
    """Keeps the head and tail of a possibly huge output, and how much was dropped."""

    def __init__(self) -> None:
        self.head: list[str] = []
        self.head_len = 0
        self.tail = ""
        self.total = 0

    def write(self, text: str) -> None:
        self.total += len(text)
        room = OUTPUT_HEAD_CHARS - self.head_len
        if room > 0:
            self.head.append(text[:room])
            self.head_len += min(len(text), room)
            text = text[room:]
        if text:
            self.tail = (self.tail + text)[-OUTPUT_TAIL_CHARS:]

    def text(self) -> str:
        head = "".join(self.head)
        dropped = self.total - len(head) - len(self.tail)
        if dropped > 0:
            return f"{head}\n… ({dropped} characters of output omitted) …\n{self.tail}"
        return head + self.tail


_local = threading.local()
_install_lock = threading.Lock()
_active_runs = 0


class _Router:
    """Stands in for sys.stdout/stderr: capturing threads write to their buffer, others pass through."""

    def __init__(self, target: TextIO, slot: str) -> None:
        self._target = target
        self._slot = slot

    def _sink(self) -> Any:
        return getattr(_local, self._slot, None) or self._target

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        sink = self._sink()
        sink.write(text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if getattr(_local, self._slot, None) is None:
            self._target.flush()

    def isatty(self) -> bool:
        return False if getattr(_local, self._slot, None) is not None else self._target.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


class _Capture:
    """Route this thread's stdout/stderr into buffers for the duration of a ``with``."""

    def __init__(self) -> None:
        self.stdout = _Buffer()
        self.stderr = _Buffer()

    def __enter__(self) -> _Capture:
        global _active_runs
        with _install_lock:
            if _active_runs == 0:
                if not isinstance(sys.stdout, _Router):
                    sys.stdout = _Router(sys.stdout, "stdout")
                if not isinstance(sys.stderr, _Router):
                    sys.stderr = _Router(sys.stderr, "stderr")
            _active_runs += 1
        _local.stdout, _local.stderr = self.stdout, self.stderr
        return self

    def __exit__(self, *exc: object) -> None:
        global _active_runs
        _local.stdout = _local.stderr = None
        with _install_lock:
            _active_runs -= 1
            if _active_runs == 0:
                for name in ("stdout", "stderr"):
                    current = getattr(sys, name)
                    if isinstance(current, _Router):
                        setattr(sys, name, current._target)

    def render(self) -> list[str]:
        parts = []
        out, err = self.stdout.text(), self.stderr.text()
        if out:
            parts.append(out.rstrip("\n"))
        if err:
            parts.append("[stderr]\n" + err.rstrip("\n"))
        return parts


# timeout -------------------------------------------------------------------------
class _ExecutionTimeout(BaseException):
    """Raised inside the running code by the watchdog; a BaseException so `except Exception` can't swallow it."""


class _Watchdog:
    """Interrupts one thread after a deadline, unless it finishes first."""

    def __init__(self, thread_id: int, timeout_s: float) -> None:
        self._thread_id = thread_id
        self._lock = threading.Lock()
        self._done = False
        self._fired = False
        self._timer = threading.Timer(timeout_s, self._fire)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self._fired = True
            _set_async_exc(self._thread_id, _ExecutionTimeout)

    def finish(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._done = True
            fired = self._fired
        if fired:  # an interrupt may still be pending: let it land here, then report the timeout
            _absorb_pending_interrupt()
            raise _ExecutionTimeout


def _absorb_pending_interrupt() -> None:
    """Take a pending ``_ExecutionTimeout`` now, in this thread, instead of clearing it.

    Clearing it (``PyThreadState_SetAsyncExc(id, NULL)``) leaves CPython's interpreter-wide
    "async exception pending" signal set (3.11 signals on every call, and only a thread that
    takes an async exception resets it). From then on, any thread running under a trace
    function (a debugger, ``evals.bounded_eval``'s time limit for ``--check``) loops forever
    at the start of its next frame. A pending exception is raised at the loop's next
    backward jump, so a short loop takes it; when none is pending the loop just ends."""
    try:
        for _ in range(64):
            pass
    except _ExecutionTimeout:
        pass


def _set_async_exc(thread_id: int, exc: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc else None)


# results -------------------------------------------------------------------------
def format_user_traceback(exc: BaseException) -> str:
    """A traceback that starts at the user's code, with library internals collapsed."""
    chain: list[tuple[BaseException, str | None]] = []
    current: BaseException | None = exc
    seen: set[int] = set()
    while current is not None and id(current) not in seen and len(chain) < 3:
        seen.add(id(current))
        if current.__cause__ is not None:
            chain.append((current, "cause"))
            current = current.__cause__
        elif current.__context__ is not None and not current.__suppress_context__:
            chain.append((current, "context"))
            current = current.__context__
        else:
            chain.append((current, None))
            current = None
    blocks: list[str] = []
    trailer: list[str] = []
    for index in range(len(chain) - 1, -1, -1):
        inner = chain[index][0]
        if index > 0 and not _has_user_frames(inner):
            # A library-internal cause (pandas' KeyError inside get_loc, say): one line is enough.
            summary = "".join(traceback.format_exception_only(type(inner), inner)).strip()
            link = "caused by" if chain[index - 1][1] == "cause" else "while handling"
            trailer.append(f"({link} {_clip(summary, 300)}, raised inside library code)")
            continue
        blocks.append(_format_one(inner))
        if index > 0:
            link = chain[index - 1][1]
            blocks.append(
                "The above exception was the direct cause of the following exception:"
                if link == "cause"
                else "During handling of the above exception, another exception occurred:"
            )
    text = "\n\n".join(blocks) + "".join("\n" + note for note in trailer)
    if len(text) > TRACEBACK_CHARS:
        text = f"… ({len(text) - TRACEBACK_CHARS} characters of traceback omitted) …\n" + text[-TRACEBACK_CHARS:]
    return text


def _has_user_frames(exc: BaseException) -> bool:
    return any(_is_user_frame(f) for f in traceback.extract_tb(exc.__traceback__))


def _is_user_frame(frame: traceback.FrameSummary) -> bool:
    return frame.filename.startswith(_FILENAME_PREFIX)


def _format_one(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    first_user = next((i for i, f in enumerate(frames) if _is_user_frame(f)), None)
    frames = frames[first_user:] if first_user is not None else frames[-1:]
    lines: list[str] = []
    hidden = 0
    for index, frame in enumerate(frames):
        if _is_user_frame(frame) or index == len(frames) - 1:
            if hidden:
                lines.append(f"  … ({hidden} frame{'s' if hidden > 1 else ''} in library code)\n")
                hidden = 0
            lines.extend(traceback.StackSummary.from_list([frame]).format())
        else:
            hidden += 1
    head = "Traceback (most recent call last):\n" if lines else ""
    return (head + "".join(lines) + "".join(traceback.format_exception_only(type(exc), exc))).rstrip("\n")


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:  # noqa: BLE001 - a user's __repr__ may raise anything
        return f"<repr of {type(value).__name__} failed: {exc!r}>"


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"… ({len(text) - limit} more chars)"

