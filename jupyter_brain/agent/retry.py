"""Kept for its import path (``AgentHarness.retry`` is a ``RetryPolicy``): retrying a model
call is part of the turn loop, ``agent/loop/retry.py``."""

from .loop.retry import TRANSIENT_KINDS, RetryPolicy, call_with_retries, is_transient

__all__ = ["TRANSIENT_KINDS", "RetryPolicy", "call_with_retries", "is_transient"]
