"""Trying a model call again after a transient failure (overloaded, a dropped connection).

Only failures the SDK has not already retried qualify: an HTTP error status was retried
by the SDK before any token arrived, so it ends the step; a failure after the stream
began (or a timeout before its first token) is tried again with exponential backoff,
bounded by the attempt count and the turn's deadline. The wait ends early on a cancel
(the turn's ``cancel`` event) and on Ctrl-C. What the failed attempt streamed is not
kept: the ``RetryEvent`` tells the views to discard it, and the history never had it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...providers.base import ProviderError
from ..events import RetryEvent
from .model_stream import ModelCall, ModelOutcome

TRANSIENT_KINDS = ("overloaded", "rate_limit", "connection", "server", "timeout")

# wait(seconds, cancel) -> True when the wait was cancelled
Wait = Callable[[float, "threading.Event | None"], bool]


def _default_wait(seconds: float, cancel: threading.Event | None) -> bool:
    if cancel is not None:
        return cancel.wait(seconds)
    time.sleep(seconds)  # Ctrl-C interrupts it
    return False


@dataclass
class RetryPolicy:
    """How often and how patiently a step's model call is tried (``AgentHarness.retry``)."""

    max_attempts: int = 3
    base_delay_s: float = 1.0
    max_delay_s: float = 8.0
    wait: Wait = _default_wait  # injectable: tests and the fault suite drive it

    def delay(self, failed_attempt: int) -> float:
        return min(self.max_delay_s, self.base_delay_s * 2 ** (failed_attempt - 1))


def is_transient(exc: ProviderError, received: int) -> bool:
    """Worth another attempt: ``received`` is how many stream events the call yielded."""
    if exc.status_code is not None:  # an HTTP error: the SDK already retried it
        return False
    if exc.kind == "timeout":
        return received == 0  # before the first token; later, the deadline is near
    if exc.kind == "overloaded":
        return True  # without an HTTP status it came as an event inside a begun stream
    if received == 0 and not getattr(exc, "mid_stream", False):
        return False  # never started: the SDK's own retries covered it
    return exc.retryable or exc.kind in TRANSIENT_KINDS


def call_with_retries(make_call: Callable[[], ModelCall], policy: RetryPolicy, *, step: int,
                      emit: Callable[[Any], None], stream: bool, cancel: threading.Event | None,
                      remaining_s: Callable[[], float], strategy_steps: list[Any],
                      announced: set[str]) -> ModelOutcome:
    """The call's outcome; a ``ProviderError`` when it is not transient or attempts ran out."""
    attempt = 1
    while True:
        kept_steps, kept_announced = len(strategy_steps), set(announced)
        call = make_call()
        try:
            return call.run(stream)
        except ProviderError as exc:
            if not is_transient(exc, call.received):
                raise
            if attempt >= policy.max_attempts:
                raise ProviderError(f"{exc.message} (gave up after {attempt} attempts)", kind=exc.kind,
                                    status_code=exc.status_code, retryable=exc.retryable,
                                    provider=exc.provider) from exc
            delay = policy.delay(attempt)
            if delay >= remaining_s():
                raise ProviderError(f"{exc.message} (no time left to retry within the turn's deadline)",
                                    kind=exc.kind, provider=exc.provider) from exc
            # The failed attempt's parsed strategy steps and announced calls are void.
            del strategy_steps[kept_steps:]
            announced.intersection_update(kept_announced)
            attempt += 1
            emit(RetryEvent(step=step, attempt=attempt, max_attempts=policy.max_attempts, reason=exc.kind,
                            message=exc.message[:300], delay_s=delay))
            if policy.wait(delay, cancel):
                return ModelOutcome(None)  # cancelled while waiting
