"""The success-rate-vs-cost figure of an eval: one point per config, its 95 % interval as
an error bar, and the Pareto front (the configs no other beats on both) joined by a line.

Cost is the mean USD per run when any config was priced, else the mean tokens per run
(a local model costs nothing, but its tokens still rank the configs), else the mean model
calls per run (a replayed scripted model reports no tokens). The figure is a
plain ``matplotlib.figure.Figure`` (not pyplot's): the caller displays it once, and no
backend shows it a second time at the end of the cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .runner import pareto_front


def cost_axis(summary: Sequence[dict[str, Any]]) -> tuple[str, list[float]]:
    """The x axis: its label and each config's value."""
    if any((s.get("cost_usd") or 0) > 0 for s in summary):
        return "mean cost per run (USD)", [float(s.get("cost_usd") or 0.0) for s in summary]
    tokens = [float((s.get("input_tokens") or 0) + (s.get("output_tokens") or 0)) for s in summary]
    if any(tokens):
        return "mean tokens per run (input + output)", tokens
    return "mean model calls per run", [float(s.get("steps") or 0.0) for s in summary]


def rate_cost_figure(summary: Sequence[dict[str, Any]], title: str = "") -> Any:
    """The figure (``summary``: ``EvalResult.summary()``; configs without a verdict are left out)."""
    from matplotlib.figure import Figure

    judged = [s for s in summary if s.get("checked")]
    label, xs = cost_axis(judged)
    fig = Figure(figsize=(6.4, 3.8), layout="constrained")
    ax = fig.add_subplot()
    points = [(s["config"], x, float(s["rate"])) for s, x in zip(judged, xs, strict=True)]
    front = set(pareto_front(points))
    labels: dict[tuple[float, float], list[str]] = {}  # configs at one point share one label
    for s, (name, x, rate) in zip(judged, points, strict=True):
        on_front = name in front
        ax.errorbar([x], [100 * rate], yerr=[[100 * (rate - s["low"])], [100 * (s["high"] - rate)]],
                    fmt="o" if on_front else "s", capsize=4, color="#1f77b4" if on_front else "#999999")
        labels.setdefault((x, 100 * rate), []).append(name)
    for (x, y), names in labels.items():
        ax.annotate(", ".join(names), (x, y), textcoords="offset points", xytext=(6, 4), fontsize=9)
    line = sorted((x, 100 * r) for n, x, r in points if n in front)
    if line:
        ax.plot([p[0] for p in line], [p[1] for p in line], "-", color="#1f77b4", alpha=0.6, label="Pareto front")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel(label)
    ax.set_ylabel("success rate (%), 95 % interval")
    ax.set_ylim(-5, 105)
    ax.margins(x=0.2)
    ax.grid(alpha=0.3)
    ax.set_title(title or "success rate vs cost", fontsize=10)
    return fig
