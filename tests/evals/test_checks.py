"""--expect and --check: typed verdicts, numbers with their tolerance, one-line failures."""

from __future__ import annotations

import pytest

from jupyter_brain.evals import CheckResult, ExpectCheck, ExprCheck, all_passed, failure_reason, run_checks


@pytest.mark.parametrize(
    ("expected", "answer", "passed"),
    [
        ("42", "Final Answer: 42", True),
        ("42", "Final Answer: 41", False),
        ("11.8", "The mean is 11.83 mg.", True),  # agrees to the expected decimals
        ("11.8", "The mean is 11.9 mg.", False),
        ("11.80", "The mean is 11.8", True),
        ("11.80", "The mean is 11.81", False),
        ("1,234", "in total 1234 rows", True),
        ("March", "The largest drop was in march.", True),
        ("largest  drop", "The Largest drop was in March.", True),
        ("March 2024", "in March   2024.", True),
        ("March 2024", "in March 2023.", False),
        ("March", "", False),
        ("0.5", "p = .5", True),
        ("42", "1420", False),  # not a digit of a longer number
    ],
)
def test_expect(expected, answer, passed):
    verdict = ExpectCheck(expected).evaluate(answer, {})
    assert isinstance(verdict, CheckResult) and verdict.kind == "expect"
    assert verdict.passed is passed
    assert (verdict.reason == "") is passed


def test_expect_reason_names_the_numbers_seen():
    verdict = ExpectCheck("11.8").evaluate("It is 12.4, not 13", {})
    assert verdict.reason == "expected '11.8' (±0.05); the answer's numbers: 12.4, 13"
    assert "no answer" in ExpectCheck("x").evaluate("  ", {}).reason


def test_check_sees_the_namespace_and_the_answer():
    namespace = {"answer_value": 11.83, "rows": [1, 2, 3]}
    assert ExprCheck("abs(answer_value - 11.8) < 0.1").evaluate("", namespace).passed
    assert ExprCheck("'11' in answer and len(rows) == 3").evaluate("it is 11.8", namespace).passed
    assert "answer" not in namespace  # the check's own scope, not the run's namespace


def test_a_false_check_says_what_it_got():
    verdict = ExprCheck("len(rows) == 2").evaluate("", {"rows": [1, 2, 3]})
    assert not verdict.passed and verdict.reason == "len(rows) == 2 is False"


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("missing > 1", "NameError: name 'missing' is not defined"),
        ("1 / 0", "ZeroDivisionError: division by zero"),
        ("x ==", "SyntaxError: invalid syntax (<check>, line 1)"),
    ],
)
def test_a_check_that_raises_fails_with_one_line(expression, reason):
    verdict = ExprCheck(expression).evaluate("answer", {})
    assert not verdict.passed and verdict.reason == reason
    assert "\n" not in verdict.reason and "Traceback" not in verdict.reason


def test_several_checks_all_must_pass():
    verdicts = run_checks([ExpectCheck("42"), ExprCheck("x == 2")], "Final Answer: 42", {"x": 1})
    assert [v.passed for v in verdicts] == [True, False]
    assert all_passed(verdicts) is False and all_passed(verdicts[:1]) is True and all_passed([]) is None
    assert failure_reason(verdicts) == "check: x == 2 is False"


def test_a_check_object_that_raises_is_a_failure_not_a_crash():
    class Broken:
        kind, label = "custom", "broken"

        def evaluate(self, answer, namespace):
            raise RuntimeError("oops")

    (verdict,) = run_checks([Broken()], "a", {})
    assert not verdict.passed and verdict.reason == "RuntimeError: oops" and verdict.kind == "custom"
