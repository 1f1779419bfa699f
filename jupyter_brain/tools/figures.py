"""The pyplot figures a ``run_python`` call created: named for the model, and rendered
as PNGs (downscaled) so a model that takes images can check its own plot."""

from __future__ import annotations

import base64
import io
import sys
from typing import Any

from jupyter_brain.agent.images import ToolImage


def _figure_numbers() -> set[Any]:
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None or "matplotlib.pyplot" not in sys.modules:
        return set()
    return set(helpers.Gcf.figs)


def _figure_note(before: set[Any]) -> list[str]:
    """'created 1 figure: Figure 1 (title)' when the code made new pyplot figures."""
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None or "matplotlib.pyplot" not in sys.modules:
        return []
    new = [(num, manager) for num, manager in list(helpers.Gcf.figs.items()) if num not in before]
    if not new:
        return []
    described = [f"Figure {num} ({_figure_title(manager)})" for num, manager in new]
    count = len(new)
    return [f"[created {count} figure{'s' if count > 1 else ''}: {', '.join(described)} — shown in the notebook"
            " and attached as images]"]


FIGURE_MAX_PX = 1024  # the longer side of a figure given to the model (and the view)
MAX_FIGURES = 4


def _figure_images(before: set[Any]) -> list[ToolImage]:
    """The new pyplot figures as PNGs, downscaled so the longer side is FIGURE_MAX_PX."""
    helpers = sys.modules.get("matplotlib._pylab_helpers")
    if helpers is None or "matplotlib.pyplot" not in sys.modules:
        return []
    images = []
    for num, manager in list(helpers.Gcf.figs.items()):
        if num in before or len(images) >= MAX_FIGURES:
            continue
        try:
            figure = manager.canvas.figure
            width, height = figure.get_size_inches()
            dpi = min(float(figure.dpi), FIGURE_MAX_PX / max(width, height, 1e-3))
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")  # labels not cut off
            images.append(ToolImage("image/png", base64.b64encode(buffer.getvalue()).decode("ascii")))
        except Exception:  # noqa: BLE001 - a figure that cannot render is still named in the text
            continue
    return images


def _close_new_figures(before: set[Any]) -> None:
    """Close the figures made since ``before`` (the inline backend would show them again)."""
    if "matplotlib.pyplot" not in sys.modules:
        return
    plt = sys.modules["matplotlib.pyplot"]
    for num in set(_figure_numbers()) - before:
        try:
            plt.close(num)
        except Exception:  # noqa: BLE001 - a figure that cannot close is shown twice, not an error
            continue


def _figure_title(manager: Any) -> str:
    try:
        figure = manager.canvas.figure
        suptitle = figure.get_suptitle() if hasattr(figure, "get_suptitle") else ""
        titles = [t for t in ([suptitle] + [ax.get_title() for ax in figure.axes]) if t]
        if titles:
            return _clip("; ".join(repr(t) for t in titles[:3]), 200)
        count = len(figure.axes)
        return f"untitled, {count} subplot{'s' if count != 1 else ''}"
    except Exception:  # noqa: BLE001 - a third-party figure must never fail the tool
        return "untitled"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more chars)"
