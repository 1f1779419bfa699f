"""Rich outputs of a ``run_python`` call, kept for the view that shows the call.

When the AgentView widget is the cell's view (``notebook/views.py`` turns routing on for
the turn), what the agent's code displays belongs inside that call's row, once, not a
second time below the widget. So, while routing is on, a run:

* captures ``display()`` calls made by its own thread instead of publishing them (the
  kernel's display publisher is wrapped per thread, like ``sys.stdout`` in
  ``python_exec``: other threads, e.g. the kernel's, publish as usual);
* keeps the rich form of its last expression's value (a DataFrame's HTML table,
  Markdown, a PNG);
* closes the pyplot figures it made once they are captured as images, or the inline
  backend would show them again below the widget when the cell ends.

Elsewhere (terminal IPython, the text view, a script) nothing changes: outputs go to the
cell as before. The outputs travel on ``ToolCallEnd.outputs`` as plain dicts
``{"mime_type", "data", "role"}``; each is capped (a note replaces what is too large),
since the event log and the widget's state hold them.
"""

from __future__ import annotations

import base64
import sys
import threading
from collections.abc import Callable
from typing import Any

MAX_OUTPUTS = 8  # per run
MAX_HTML_CHARS = 100_000  # a 60-row DataFrame table is ~10 k
MAX_TEXT_CHARS = 20_000
MAX_IMAGE_CHARS = 300_000  # base64, as agent.images.VIEW_IMAGE_MAX_CHARS
# The one form kept of a bundle, best first (SVG and JavaScript are never kept).
_PREFERRED = ("text/html", "text/markdown", "image/png", "image/jpeg", "text/plain")
_LIMITS = {"text/html": MAX_HTML_CHARS, "text/markdown": MAX_TEXT_CHARS, "text/plain": MAX_TEXT_CHARS,
           "image/png": MAX_IMAGE_CHARS, "image/jpeg": MAX_IMAGE_CHARS}
_VALUE_REPRS = (("text/html", "_repr_html_"), ("text/markdown", "_repr_markdown_"),
                ("image/png", "_repr_png_"), ("image/jpeg", "_repr_jpeg_"))

_lock = threading.Lock()
_routes = 0  # views currently showing outputs (a cell's AgentView)
_local = threading.local()
_publisher: tuple[Any, Any] | None = None  # (display_pub, our router) while installed
_installed = 0


def route_outputs_to_view() -> Callable[[], None]:
    """Runs from now on keep their rich outputs for the view; call the result to stop."""
    global _routes
    with _lock:
        _routes += 1
    released = False

    def release() -> None:
        nonlocal released
        global _routes
        with _lock:
            if not released:
                released = True
                _routes -= 1

    return release


def in_view() -> bool:
    """Whether a widget view shows the outputs of runs starting now."""
    return _routes > 0


def pick(data: dict[str, Any], role: str) -> dict[str, str] | None:
    """The one output kept of a MIME bundle (None: nothing showable in it), capped."""
    for mime in _PREFERRED:
        value = data.get(mime)
        if value is None:
            continue
        if isinstance(value, bytes):
            value = base64.b64encode(value).decode("ascii") if mime.startswith("image/") else value.decode(
                "utf-8", "replace")
        if isinstance(value, list):  # nbformat's multi-line strings
            value = "".join(str(v) for v in value)
        if not isinstance(value, str):
            continue
        value = value.strip() if mime.startswith("image/") else value
        limit = _LIMITS[mime]
        if len(value) > limit:
            kind = "image" if mime.startswith("image/") else mime.split("/")[1].upper()
            note = (f"[a {kind} output of {len(value):,} characters is not shown here: over the "
                    f"{limit:,}-character limit of the view]")
            return {"mime_type": "text/plain", "data": note, "role": role}
        return {"mime_type": mime, "data": value, "role": role}
    return None


def value_output(value: Any) -> dict[str, str] | None:
    """The rich form of a run's last value (a DataFrame's HTML table), or None if it has none."""
    data: dict[str, Any] = {}
    for mime, method in _VALUE_REPRS:
        render = getattr(type(value), method, None)
        if render is None:
            continue
        try:
            shown = render(value)
        except Exception:  # noqa: BLE001 - a user's repr may raise anything; the text repr stays
            continue
        if isinstance(shown, tuple):  # (data, metadata)
            shown = shown[0]
        if shown:
            data[mime] = shown
    return pick(data, "value") if data else None


class OutputCapture:
    """The outputs of one run in this thread (a ``with`` block around the user's code)."""

    def __init__(self) -> None:
        self.outputs: list[dict[str, str]] = []
        self.dropped = 0

    def add(self, output: dict[str, str] | None) -> None:
        if output is None:
            return
        if len(self.outputs) >= MAX_OUTPUTS:
            self.dropped += 1
            return
        self.outputs.append(output)

    def result(self) -> list[dict[str, str]]:
        if not self.dropped:
            return list(self.outputs)
        note = f"[{self.dropped} more output(s) not shown: at most {MAX_OUTPUTS} per run]"
        return [*self.outputs, {"mime_type": "text/plain", "data": note, "role": "display"}]

    def __enter__(self) -> OutputCapture:
        global _installed
        with _lock:
            if _installed == 0:
                _install()
            _installed += 1
        _local.capture = self
        return self

    def __exit__(self, *exc: object) -> None:
        global _installed
        _local.capture = None
        with _lock:
            _installed -= 1
            if _installed == 0:
                _uninstall()


def _route(original: Callable[..., Any]) -> Callable[..., Any]:
    def publish(data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
        capture = getattr(_local, "capture", None)
        if capture is None or not isinstance(data, dict):
            return original(data, metadata, *args, **kwargs)
        capture.add(pick(data, "display"))
        return None

    return publish


def _install() -> None:
    """Wrap the kernel's display publisher (only inside a running IPython)."""
    global _publisher
    if "IPython" not in sys.modules:
        return
    try:
        from IPython import get_ipython  # lazy: only when IPython is already loaded

        shell = get_ipython()
        pub = getattr(shell, "display_pub", None)
        if pub is None:
            return
        router = _route(pub.publish)
        pub.publish = router
        _publisher = (pub, router)
    except Exception:  # noqa: BLE001 - without the wrap, displays go to the cell as before
        _publisher = None


def _uninstall() -> None:
    global _publisher
    if _publisher is None:
        return
    pub, router = _publisher
    _publisher = None
    if pub.__dict__.get("publish") is router:  # unless someone replaced it meanwhile
        del pub.publish
