"""The old single-module import paths keep working through the package's re-exports."""

from __future__ import annotations

import jupyter_brain.agent.context as ctx
from jupyter_brain.agent import cost
from jupyter_brain.agent.workspace import Workspace, WorkspaceSection
from jupyter_brain.foundation import catalog, tokens


def test_context_reexports_the_same_objects() -> None:
    assert ctx.TokenCounter is tokens.TokenCounter
    assert ctx.MESSAGE_OVERHEAD_TOKENS == tokens.MESSAGE_OVERHEAD_TOKENS
    assert ctx.context_window_for is catalog.context_window_for
    assert ctx.DEFAULT_CONTEXT_WINDOW == catalog.DEFAULT_CONTEXT_WINDOW
    assert (ctx.Workspace, ctx.WorkspaceSection) == (Workspace, WorkspaceSection)
    assert ctx._text_of is tokens.text_of
    assert dict(ctx._WINDOWS) == catalog.CONTEXT_WINDOWS
    for name in ctx.__all__:
        assert getattr(ctx, name) is not None, name


def test_cost_reexports_the_catalogue_prices() -> None:
    assert cost.PRICES is catalog.PRICES
    assert cost.price_for is catalog.price_for
    assert cost.ModelPrice is catalog.ModelPrice
    assert cost.FREE_PROVIDERS is catalog.FREE_PROVIDERS
