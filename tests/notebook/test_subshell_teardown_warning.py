"""ipykernel's "coroutine ... run_in_context was never awaited" (a subshell deleted by the
front-end while a message was arriving) is hidden once the extension is loaded; any other
never-awaited coroutine still warns."""

from __future__ import annotations

import gc
import warnings
from functools import partial

from ipykernel.utils import _async_in_context


async def _handler(subshell_id: object) -> None:  # as ipykernel wraps it: a partial
    return None


async def some_other_coroutine() -> None:
    return None


def _dropped_coroutine_warnings(make) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        coro = make()
        del coro
        gc.collect()
    return [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def test_only_ipykernels_subshell_teardown_warning_is_hidden(shell):
    assert _dropped_coroutine_warnings(lambda: _async_in_context(partial(_handler, None))()) == []
    assert any("some_other_coroutine" in m for m in _dropped_coroutine_warnings(some_other_coroutine))


def test_without_the_extension_the_warning_shows():
    from jupyter_brain.notebook.kernel_channel import SUBSHELL_TEARDOWN_WARNING

    with warnings.catch_warnings():
        warnings.filters[:] = [f for f in warnings.filters if f[1] is None or f[1].pattern != SUBSHELL_TEARDOWN_WARNING]
        shown = _dropped_coroutine_warnings(lambda: _async_in_context(partial(_handler, None))())
    assert any("run_in_context" in m for m in shown)
