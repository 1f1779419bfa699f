"""Checks on an agent's answer: did it get it right?

A check looks at the final text (``answer``) and, for ``--check``, at the namespace the
run left behind, and says ``passed`` with a one-line ``reason``. Checks never raise: a
check whose own expression fails is a failure that names the exception. Used by
``%%compare`` (``jupyter_brain.compare``) and meant for eval sets too, so nothing here
knows about notebooks or IPython.

Numbers in ``--expect``: a number in the answer matches the expected one when it agrees to
the expected number's decimals (``|got - expected| <= 0.5 * 10**-decimals``: "11.8" accepts
11.75 … 11.85, "42" accepts 41.5 … 42.5), so an answer that rounds to what was asked for
passes and one that differs in a written digit fails.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from .bounded_eval import CHECK_FILENAME, CheckTimedOut, eval_with_timeout

REASON_LIMIT = 200  # a reason is one line, short enough for a tooltip

# 1,234.5 · -3 · .5 · 1e-3 (a thousands separator only in groups of three)
NUMBER = r"(?<![\d.,])[-+]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_RE = re.compile(NUMBER)


class CheckResult(BaseModel):
    """One check's verdict. ``opinion`` marks a model's judgement (``--judge``), not a rule."""

    model_config = ConfigDict(frozen=True)

    kind: str  # expect, check, judge
    label: str  # what was checked, as the user wrote it
    passed: bool
    reason: str
    opinion: bool = False
    recorded: bool = False  # a judge's verdict given before (replayed), not asked again: no call, no cost
    input_tokens: int = 0  # a judge's model call; zero for rule checks
    output_tokens: int = 0
    cost_usd: float | None = 0.0


@runtime_checkable
class Check(Protocol):
    """Anything that judges an answer (and the namespace its run left behind)."""

    kind: str
    label: str

    def evaluate(self, answer: str, namespace: Mapping[str, Any]) -> CheckResult: ...


def one_line(text: str, limit: int = REASON_LIMIT) -> str:
    """The text on one line, cut at ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _numbers(text: str) -> list[tuple[str, float]]:
    found = []
    for match in _NUMBER_RE.finditer(text):
        raw = match.group(0)
        try:
            found.append((raw, float(raw.replace(",", ""))))
        except ValueError:
            continue
    return found


def _decimals(raw: str) -> int:
    mantissa = raw.lower().split("e")[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def tolerance(raw: str) -> float:
    """Half a unit of the expected number's last written digit (``"11.8"`` → 0.05)."""
    exponent = int(raw.lower().split("e")[1]) if "e" in raw.lower() else 0
    return 0.5 * 10.0 ** (exponent - _decimals(raw)) * (1 + 1e-9)


def numbers_match(expected_raw: str, got: float) -> bool:
    expected = float(expected_raw.replace(",", ""))
    return abs(got - expected) <= tolerance(expected_raw)


@dataclass(frozen=True)
class ExpectCheck:
    """``--expect TEXT``: the answer contains (or equals) the text, case and spacing aside;
    the numbers in it are compared with ``tolerance``."""

    expected: str
    kind: str = "expect"

    @property
    def label(self) -> str:
        return f"expect {self.expected!r}"

    def evaluate(self, answer: str, namespace: Mapping[str, Any] | None = None) -> CheckResult:
        passed = self._matches(answer or "")
        return CheckResult(kind=self.kind, label=self.label, passed=passed,
                           reason="" if passed else self._why_not(answer or ""))

    def _pattern(self) -> tuple[re.Pattern[str], list[str]]:
        """The expected text as a regex: each number a capture, any run of spaces flexible."""
        parts, numbers, last = [], [], 0
        text = " ".join(self.expected.split())
        for match in _NUMBER_RE.finditer(text):
            parts.append(_words(text[last:match.start()]))
            parts.append(f"({NUMBER})")
            numbers.append(match.group(0))
            last = match.end()
        parts.append(_words(text[last:]))
        return re.compile("".join(parts), re.IGNORECASE), numbers

    def _matches(self, answer: str) -> bool:
        pattern, numbers = self._pattern()
        if not numbers:
            return bool(pattern.search(answer))
        for match in pattern.finditer(answer):
            got = match.groups()
            try:
                if all(numbers_match(e, float(g.replace(",", ""))) for e, g in zip(numbers, got, strict=True)):
                    return True
            except ValueError:
                continue
        return False

    def _why_not(self, answer: str) -> str:
        if not answer.strip():
            return f"expected {self.expected!r}; the run gave no answer"
        _, numbers = self._pattern()
        seen = [raw for raw, _ in _numbers(answer)]
        if numbers and seen:
            return one_line(f"expected {self.expected!r} (±{_fmt_tol(numbers[0])}); the answer's numbers: "
                            + ", ".join(seen[-5:]))
        return one_line(f"expected {self.expected!r}, not found in the answer")


def _words(text: str) -> str:
    return r"\s*".join(re.escape(word) for word in text.split(" ")) if text.strip() else r"\s*"


def _fmt_tol(raw: str) -> str:
    return f"{tolerance(raw) / (1 + 1e-9):g}"


DEFAULT_CHECK_TIMEOUT_S = 5.0  # AgentMagics.check_timeout's default


@dataclass(frozen=True)
class ExprCheck:
    """``--check EXPR``: a Python expression, true when the run got it right. It is
    evaluated in the namespace the run left behind, with ``answer`` bound to the final
    text; an expression that raises is a failure naming the exception, on one line, and
    one that takes longer than ``timeout_s`` fails as timed out (``bounded_eval``)."""

    expression: str
    kind: str = "check"
    timeout_s: float | None = DEFAULT_CHECK_TIMEOUT_S

    @property
    def label(self) -> str:
        return self.expression

    def evaluate(self, answer: str, namespace: Mapping[str, Any]) -> CheckResult:
        scope = dict(namespace)
        scope["answer"] = answer or ""
        try:
            code = compile(self.expression, CHECK_FILENAME, "eval")
            value = eval_with_timeout(code, scope, self.timeout_s)  # the user's own expression, in the user's kernel
            passed = bool(value)
        except CheckTimedOut as exc:
            return CheckResult(kind=self.kind, label=self.label, passed=False, reason=one_line(str(exc)))
        except Exception as exc:  # noqa: BLE001 - a failing check is a verdict, not a crash
            return CheckResult(kind=self.kind, label=self.label, passed=False,
                               reason=one_line(f"{type(exc).__name__}: {exc}"))
        reason = "" if passed else one_line(f"{self.expression} is {_short_repr(value)}")
        return CheckResult(kind=self.kind, label=self.label, passed=passed, reason=reason)


def _short_repr(value: Any) -> str:
    try:
        return one_line(repr(value), 80)
    except Exception:  # noqa: BLE001 - a repr that raises still needs a reason
        return f"a {type(value).__name__}"


def run_checks(checks: Sequence[Check], answer: str, namespace: Mapping[str, Any]) -> list[CheckResult]:
    """Every check's verdict, in order (a check that raises anyway becomes a failure)."""
    verdicts = []
    for check in checks:
        try:
            verdicts.append(check.evaluate(answer, namespace))
        except Exception as exc:  # noqa: BLE001 - one broken check must not lose the others
            verdicts.append(CheckResult(kind=getattr(check, "kind", "check"), label=getattr(check, "label", "?"),
                                        passed=False, reason=one_line(f"{type(exc).__name__}: {exc}")))
    return verdicts


def all_passed(verdicts: Sequence[CheckResult]) -> bool | None:
    """A run passes when every check does; None when there was no check."""
    return all(v.passed for v in verdicts) if verdicts else None


def failure_reason(verdicts: Sequence[CheckResult]) -> str:
    """The failed checks' reasons on one line (a judge's marked as its opinion)."""
    return one_line("; ".join(f"{'judge (model opinion)' if v.opinion else v.kind}: {v.reason}"
                              for v in verdicts if not v.passed), 300)
