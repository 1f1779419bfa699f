"""The one-line summary of any value: shape and columns, length, or a short repr.

Never raises: a user's object whose ``repr`` or ``len`` fails still gets a line.
"""

from __future__ import annotations

import collections.abc
import inspect
import itertools
import types
from typing import Any

from .kinds import is_array_like, is_callable_definition, is_dataframe, is_series

SUMMARY_CHARS = 160


def summarize(value: Any) -> str:
    """A one-line description: shape and columns, length, or a short repr (only the
    shape, length or type under a policy with ``send_outputs: false``)."""
    from ..values_policy import send_outputs, shape_only

    if not send_outputs():
        return clip(shape_only(value), SUMMARY_CHARS)
    try:
        text = _summarize(value)
    except Exception as exc:  # noqa: BLE001 - user objects may raise anything; the listing goes on
        text = f"<summary failed: {type(exc).__name__}>"
    return clip(text.replace("\n", " "), SUMMARY_CHARS)


def _summarize(value: Any) -> str:
    if is_dataframe(value):
        n_rows, n_cols = value.shape
        cols = [f"{c} {t}" for c, t in list(value.dtypes.items())[:8]]
        more = f", … (+{n_cols - 8})" if n_cols > 8 else ""
        return f"{n_rows} rows × {n_cols} cols: {', '.join(cols)}{more}"
    if is_series(value):
        label = f", name {value.name!r}" if value.name is not None else ""
        return f"len {len(value)}, dtype {value.dtype}{label}"
    if is_array_like(value) and not isinstance(value, (str, bytes)):
        if value.shape == () and hasattr(value, "item"):
            return f"{short_repr(value)} ({value.dtype})"
        return f"shape {value.shape}, dtype {value.dtype}"
    if isinstance(value, collections.abc.Mapping):
        keys = ", ".join(short_repr(k, 30) for k in list(itertools.islice(value, 6)))
        more = ", …" if len(value) > 6 else ""
        return f"len {len(value)}" + (f": keys {keys}{more}" if keys else "")
    if isinstance(value, (str, bytes, bytearray)):
        shown = short_repr(value, 80)
        return shown if len(value) <= 60 else f"len {len(value)}: {shown}"
    if isinstance(value, (list, tuple, set, frozenset, collections.abc.Sized)) and not is_callable_definition(value):
        try:
            return f"len {len(value)}"
        except Exception:  # noqa: BLE001 - a broken __len__ falls through to the repr
            pass
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if is_callable_definition(value):
        try:
            return f"{getattr(value, '__name__', '?')}{inspect.signature(value)}"
        except (TypeError, ValueError):
            return getattr(value, "__name__", repr(value))
    return short_repr(value, 100)


def short_repr(value: Any, limit: int = 100) -> str:
    """``repr(value)`` clipped to ``limit`` characters; a note when the repr itself fails."""
    try:
        text = repr(value)
    except Exception as exc:  # noqa: BLE001 - user objects may raise anything from __repr__
        return f"<repr failed: {type(exc).__name__}>"
    return clip(text, limit)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… ({len(text) - limit} more chars)"
