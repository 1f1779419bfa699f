"""Fixtures of the context tests."""

from __future__ import annotations

import pytest

from jupyter_brain.foundation.tokens import TokenCounter


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()
