"""Scripted models with a real price, for the budget-cap tests (tests/agent/cost_caps,
tests/notebook/test_budget.py): the cap needs a priced model to check against."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_brain.providers.scripted import ScriptedProvider

SONNET_IN, SONNET_OUT = 3.0 / 1e6, 15.0 / 1e6  # claude-sonnet-4's price per token


class Priced(ScriptedProvider):
    """A scripted model priced as claude-sonnet-4, writing at most 1,000 tokens a call."""

    name = "anthropic"
    max_tokens = 1000

    def __init__(self, responses: Any = (), **kwargs: Any) -> None:
        super().__init__(responses, model="claude-sonnet-4", **kwargs)


class MustNotCall(Priced):
    """Fails the test when called."""

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        pytest.fail("the provider was called although the call could cross the cap")

    def generate_stream(self, *args: Any, **kwargs: Any) -> Any:
        pytest.fail("the provider was called although the call could cross the cap")
