"""Context levels: the tracker reports only threshold crossings."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.context.levels import ContextWarningTracker


def test_tracker_reports_only_crossings_both_ways() -> None:
    t = ContextWarningTracker(100_000)
    assert (t.warning_tokens, t.critical_tokens) == (70_000, 85_000)
    assert t.update(10_000) is None and t.level == "ok"
    up = t.update(70_000)
    assert up is not None and (up.previous, up.level, up.tokens, up.window) == ("ok", "warning", 70_000, 100_000)
    assert up.ratio == pytest.approx(0.7) and up.rising
    assert t.update(80_000) is None
    crit = t.update(90_000)
    assert (crit.previous, crit.level) == ("warning", "critical")
    assert t.update(99_000) is None
    down = t.update(40_000)
    assert (down.previous, down.level, down.rising) == ("critical", "ok", False)
    assert t.last_tokens == 40_000 and t.ratio == pytest.approx(0.4)
    assert t.update(86_000).level == "critical"  # straight from ok


@pytest.mark.parametrize(("warning", "critical"), [(0, 0.8), (0.9, 0.8), (0.8, 0.8), (0.5, 1.2), (-0.1, 0.5)])
def test_tracker_rejects_bad_ratios(warning, critical) -> None:
    with pytest.raises(ValueError, match="warning_ratio"):
        ContextWarningTracker(1000, warning, critical)


def test_tracker_rejects_bad_window() -> None:
    with pytest.raises(ValueError, match="context_window"):
        ContextWarningTracker(0)
