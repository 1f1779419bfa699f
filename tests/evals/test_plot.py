"""The eval's success-rate-vs-cost figure (#27): one point per config, the Pareto front joined."""

from __future__ import annotations

import pytest

from jupyter_brain.evals.plot import cost_axis, rate_cost_figure
from jupyter_brain.evals.runner import summarize


def rows(config: str, passed: list[bool], cost: float | None, tokens: int = 100) -> list[dict]:
    return [{"task": "t", "config": config, "repeat": i, "passed": p, "input_tokens": tokens, "output_tokens": 10,
             "cost_usd": cost, "seconds": 1.0, "steps": 1} for i, p in enumerate(passed, 1)]


def test_the_figure_has_a_point_per_config_and_the_pareto_front():
    summary = summarize(rows("cheap", [True, False, False], 0.01) + rows("dear", [True, True, True], 0.05)
                        + rows("worse", [False, False, True], 0.06), ["cheap", "dear", "worse"])
    fig = rate_cost_figure(summary, "tiny: success rate vs cost")
    (ax,) = fig.axes
    assert ax.get_xlabel() == "mean cost per run (USD)" and ax.get_title() == "tiny: success rate vs cost"
    assert sorted(t.get_text() for t in ax.texts) == ["cheap", "dear", "worse"]
    (front,) = [line for line in ax.get_lines() if line.get_label() == "Pareto front"]
    assert list(front.get_xdata()) == pytest.approx([0.01, 0.05])  # "worse" costs more and does no better
    from io import BytesIO

    png = BytesIO()
    fig.savefig(png, format="png")
    assert png.getvalue()[:4] == b"\x89PNG"


def test_unpriced_configs_are_placed_by_their_tokens():
    summary = summarize(rows("local", [True], None, tokens=400) + rows("small", [False], 0.0, tokens=90),
                        ["local", "small"])
    assert cost_axis(summary) == ("mean tokens per run (input + output)", [410.0, 100.0])


def test_without_cost_or_tokens_configs_are_placed_by_their_model_calls():
    summary = summarize([{**r, "steps": 2} for r in rows("react", [True], None, tokens=0)]
                        + [{**r, "steps": 1} for r in rows("cot", [False], None, tokens=0)], ["react", "cot"])
    for s in summary:
        s["output_tokens"] = 0
    assert cost_axis(summary) == ("mean model calls per run", [2.0, 1.0])
