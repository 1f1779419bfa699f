"""Where a turn is shown: the live widget in a kernel with a front-end, plain text elsewhere.

A widget is displayed (with a display id) *before* anything streams into it; closing
a view flushes its last batch and re-publishes it with the Markdown transcript, which
is what a reopened notebook, nbconvert or GitHub shows.
"""

from __future__ import annotations

import sys
from typing import Any


def agent_view(shell: Any, *, fold: str = "auto") -> Any:
    """An ``AgentView`` (approval clicks routed to a kernel subshell) or a ``TextView``.

    With the widget, ``run_python``'s figures and displays go into the call's row
    (``tools/rich_output``) until ``close_view``; ``fold`` is ``AgentMagics.fold``."""
    from IPython.display import display

    kernel = getattr(shell, "kernel", None)
    if kernel is not None:
        try:
            from ..tools.rich_output import route_outputs_to_view
            from ..widgets import AgentView
            from .headless import is_headless
            from .kernel_channel import comms_routed_from_the_start

            # Approval clicks (and the view's "ready") must reach the kernel while this cell
            # still runs: its comm goes to a subshell, from before it opens.
            with comms_routed_from_the_start() as routed:
                view = AgentView(fold=fold, drawn=not is_headless(shell))  # headless: no JS or CSS sent
            view.messages_routed = any(made is view.comm for made in routed)
            view.finishes_as_bundle = True  # close_view publishes the turn and retires the widget
            # A display id, so the finished turn can add its Markdown transcript.
            view.display_handle = display(view, display_id=True)
            view.release_outputs = route_outputs_to_view()
            return view
        except Exception as exc:  # noqa: BLE001 - e.g. the JS bundle is missing
            print(f"(widget unavailable: {exc}; showing plain text)", file=sys.stderr)
    from ..widgets import TextView  # only where there is no widget: not on the widget's first word (#40)

    return TextView(sys.stdout)


def compare_view(shell: Any, strategies: list[str], runs: int, prompt: str) -> Any:
    """The ``CompareView`` widget in a kernel with a front-end; a text table elsewhere."""
    from IPython.display import display

    from ..widgets.compare_text import CompareTextView

    if getattr(shell, "kernel", None) is not None:
        try:
            from ..widgets import CompareView

            view = CompareView(strategies, runs, prompt)
            view.display_handle = display(view, display_id=True)
            return view
        except Exception as exc:  # noqa: BLE001 - e.g. the JS bundle is missing
            print(f"(widget unavailable: {exc}; showing plain text)", file=sys.stderr)
    return CompareTextView(sys.stdout, strategies)


def close_view(view: Any) -> None:
    """Flush the widget's last batch and re-publish its output with the Markdown fallback.

    An ``AgentView``'s turn is final here: its output becomes the finished turn's bundle
    (``widgets/turn_bundle.py``) and the widget is retired, so the saved notebook holds
    no widget code and a re-run leaves no orphaned view. The text view has nothing to flush.
    """
    release = getattr(view, "release_outputs", None)
    if release is not None:
        release()
    if hasattr(view, "finished_bundle"):
        # An AgentView sends what is pending without its turn-end commit (the bundle replaces
        # it now); a CompareView's bundle commits its columns itself.
        flush = getattr(view, "flush", None) or view.close_stream
        flush()
        bundle = view.finished_bundle()
        handle = getattr(view, "display_handle", None)
        if handle is not None:
            metadata = getattr(view, "output_metadata", None)  # the turn's recording (notebook/replay.py)
            handle.update(bundle, raw=True, **({"metadata": metadata} if metadata else {}))
        view.retire()
        return
    close = getattr(view, "close_stream", None)
    if close is not None:
        close()
    handle = getattr(view, "display_handle", None)
    if handle is not None:
        metadata = getattr(view, "output_metadata", None)  # the turn's recording (notebook/replay.py)
        handle.update(view, **({"metadata": metadata} if metadata else {}))
