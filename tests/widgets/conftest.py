"""Fixtures for the view tests."""

from __future__ import annotations

import pytest

from .fake_clock import FakeClock


@pytest.fixture()
def clock() -> FakeClock:
    """A fake clock (and timer factory) that only moves when the test advances it."""
    return FakeClock()
