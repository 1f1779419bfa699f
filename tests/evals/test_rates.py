"""Wilson intervals, checked against the formula worked by hand."""

from __future__ import annotations

import math

import pytest

from jupyter_brain.evals import success_rate, wilson_interval


def by_hand(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    denominator = 1 + z * z / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / denominator, (centre + spread) / denominator


@pytest.mark.parametrize(("k", "n"), [(3, 5), (1, 10), (7, 20)])
def test_wilson_matches_the_formula(k, n):
    assert wilson_interval(k, n) == pytest.approx(by_hand(k, n))


def test_known_values():
    # 3 of 5: 23.1 % to 88.2 % (the textbook's worked example); 0/5 and 5/5 are not zero-width.
    assert wilson_interval(3, 5) == pytest.approx((0.2307, 0.8824), abs=1e-4)
    assert wilson_interval(0, 5) == pytest.approx((0.0, 0.4345), abs=1e-4)
    assert wilson_interval(5, 5) == pytest.approx((0.5655, 1.0), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_rate_text_and_bad_input():
    assert success_rate(3, 5).text() == "3/5 (60 %, 23–88 %)"
    assert success_rate(0, 0).text() == "–" and success_rate(0, 0).rate is None
    with pytest.raises(ValueError, match="between 0 and 5"):
        wilson_interval(6, 5)
