"""A ``--check`` that never ends fails as timed out instead of hanging the kernel (#27)."""

from __future__ import annotations

import threading

import pytest

from jupyter_brain.evals import ExprCheck
from jupyter_brain.evals.bounded_eval import CheckTimedOut, eval_with_timeout


@pytest.mark.parametrize("expression", [
    "sum(1 for _ in iter(int, 1))",  # a generator that never ends
    "[x for x in iter(int, 1)]",  # a comprehension that never ends
    "any(iter(lambda: False, True))",  # a Python function called forever
])
def test_an_endless_check_fails_as_timed_out_and_is_stopped(expression):
    verdict = ExprCheck(expression, timeout_s=0.2).evaluate("42", {})
    assert not verdict.passed
    assert verdict.reason == "timed out after 0.2 s"  # and stopped (else: "… runs on in the background")


def test_a_check_that_waits_in_c_code_says_it_runs_on():
    release = threading.Event()
    try:
        # A second for the worker to reach the wait: once inside it, no Python event comes.
        verdict = ExprCheck("release.wait()", timeout_s=1.0).evaluate("", {"release": release})
    finally:
        release.set()  # let the waiting worker end
    assert not verdict.passed
    assert verdict.reason == ("timed out after 1 s; it could not be stopped (it waits or loops inside C code) "
                              "and runs on in the background")


def test_a_quick_check_still_passes_and_raises_as_before():
    namespace = {"values": [1, 2, 3]}
    assert ExprCheck("sum(values) == 6 and answer == 'x'", timeout_s=1).evaluate("x", namespace).passed
    failed = ExprCheck("1 / 0", timeout_s=1).evaluate("x", namespace)
    assert failed.reason == "ZeroDivisionError: division by zero"
    with pytest.raises(KeyError):  # no limit: in the calling thread, as eval
        eval_with_timeout(compile("{}['k']", "<check>", "eval"), {}, None)


def test_the_time_limit_is_a_verdict_not_an_exception():
    with pytest.raises(CheckTimedOut, match="timed out after 0.1 s"):
        eval_with_timeout(compile("sum(1 for _ in iter(int, 1))", "<check>", "eval"), {}, 0.1)
