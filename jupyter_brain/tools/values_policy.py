"""Whether values may reach the model (the admin's ``send_outputs``, issue #38).

With ``send_outputs: false`` the variable tools, ``run_python`` and the workspace layer
show only names, types and shapes: never a value, a repr, printed output or a figure.
The notebook sets it from the policy when the extension loads; a plain process sends
values as before.
"""

from __future__ import annotations

from typing import Any

_SEND_OUTPUTS = True
HIDDEN_NOTE = "values not sent: the admin's policy has send_outputs: false"


def set_send_outputs(send: bool) -> None:
    global _SEND_OUTPUTS
    _SEND_OUTPUTS = bool(send)


def send_outputs() -> bool:
    return _SEND_OUTPUTS


def shape_only(value: Any) -> str:
    """A value's type and shape (or length), nothing it holds."""
    from .variables.kinds import is_array_like, is_callable_definition, is_dataframe, is_series

    try:
        if is_dataframe(value):
            n_rows, n_cols = value.shape
            cols = [f"{c} {t}" for c, t in list(value.dtypes.items())[:8]]
            return f"{n_rows} rows × {n_cols} cols: {', '.join(cols)}" + (", …" if n_cols > 8 else "")
        if is_series(value):
            return f"len {len(value)}, dtype {value.dtype}"
        if is_array_like(value) and not isinstance(value, (str, bytes)):
            return f"shape {tuple(value.shape)}, dtype {value.dtype}"
        if is_callable_definition(value):
            return f"{type(value).__name__} {getattr(value, '__name__', '')}".strip()
        if hasattr(value, "__len__") and not isinstance(value, type):
            return f"len {len(value)}"
    except Exception:  # noqa: BLE001 - a user's object may raise anything; its type is enough
        pass
    return type(value).__name__
