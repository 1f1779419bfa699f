"""TurnBudget: deadline, steps, atomic reflection claims."""

from __future__ import annotations

import threading

import pytest

from jupyter_brain.agent.budget import DEFAULT_MAX_REFLECTIONS, TurnBudget


class FakeClock:
    def __init__(self, t: float = 50.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_defaults():
    b = TurnBudget()
    assert DEFAULT_MAX_REFLECTIONS == 4
    assert (b.timeout_s, b.max_steps, b.max_reflections) == (60.0, 6, 4)
    assert b.steps == 0 and b.reflections == 0
    assert not b.is_expired()


def test_claim_reflection_sequential():
    b = TurnBudget()
    assert [b.claim_reflection() for _ in range(6)] == [True] * 4 + [False] * 2
    assert b.reflections == 4


def test_claim_step():
    b = TurnBudget(max_steps=3)
    assert [b.claim_step() for _ in range(5)] == [True, True, True, False, False]
    assert b.steps == 3


def test_zero_caps():
    b = TurnBudget(max_steps=0, max_reflections=0)
    assert not b.claim_step() and not b.claim_reflection()


@pytest.mark.parametrize("max_reflections", [1, 4, 17])
def test_claim_reflection_atomic_under_threads(max_reflections):
    b = TurnBudget(max_reflections=max_reflections)
    n = 50
    barrier = threading.Barrier(n)
    results: list[bool] = []
    lock = threading.Lock()

    def worker():
        barrier.wait()
        ok = b.claim_reflection()
        with lock:
            results.append(ok)

    threads = [threading.Thread(target=worker) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == n
    assert sum(results) == max_reflections
    assert b.reflections == max_reflections


def test_claim_step_atomic_under_threads():
    b = TurnBudget(max_steps=7)
    n = 40
    barrier = threading.Barrier(n)
    wins = []

    def worker():
        barrier.wait()
        for _ in range(3):
            if b.claim_step():
                wins.append(1)

    threads = [threading.Thread(target=worker) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 7 and b.steps == 7


def test_deadline_with_fake_clock():
    clock = FakeClock(100.0)
    b = TurnBudget(timeout_s=10, clock=clock)
    assert b.started == 100.0 and b.deadline == 110.0
    assert b.remaining_s() == 10.0 and b.elapsed_s() == 0.0
    assert not b.is_expired()
    clock.t = 107.5
    assert b.remaining_s() == pytest.approx(2.5)
    assert b.elapsed_s() == pytest.approx(7.5)
    assert not b.is_expired()
    clock.t = 110.0
    assert b.is_expired()
    assert b.remaining_s() == 0.0
    clock.t = 500.0
    assert b.is_expired()
    assert b.remaining_s() == 0.0  # never negative


def test_timeout_is_float():
    b = TurnBudget(timeout_s=3, clock=FakeClock(0))
    assert isinstance(b.timeout_s, float) and b.remaining_s() == 3.0
