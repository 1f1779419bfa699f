"""Success rates with an honest interval: few runs say little, and the interval says how little.

The Wilson score interval (Wilson 1927) rather than the normal approximation: it stays
inside [0, 1] and is not zero-width at 0/n or n/n, which is where small samples live.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z_95 = 1.959963984540054  # the two-sided 95 % normal quantile


@dataclass(frozen=True)
class Rate:
    """``successes`` of ``n`` and its 95 % Wilson interval (``low``, ``high``)."""

    successes: int
    n: int
    low: float
    high: float

    @property
    def rate(self) -> float | None:
        return self.successes / self.n if self.n else None

    def text(self) -> str:
        """``"3/5 (60 %, 23–88 %)"``; ``"–"`` without runs."""
        if not self.n:
            return "–"
        return (f"{self.successes}/{self.n} ({100 * self.successes / self.n:.0f} %, "
                f"{100 * self.low:.0f}–{100 * self.high:.0f} %)")


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` in ``n`` trials; (0, 1) when n is 0."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and {n}, got {successes}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def success_rate(successes: int, n: int) -> Rate:
    low, high = wilson_interval(successes, n)
    return Rate(successes, n, low, high)
