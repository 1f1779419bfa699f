"""What kind of value something is, and its type's name.

pandas and numpy are recognised by class name and module, never imported here: a user
who has not imported pandas does not pay for it.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any


def is_kind(value: Any, package: str, class_name: str) -> bool:
    """Whether ``value`` is ``package``'s ``class_name`` (or a subclass), without importing it."""
    if package not in sys.modules:
        return False
    return any(
        cls.__name__ == class_name and cls.__module__.split(".")[0] == package for cls in type(value).__mro__
    )


def is_dataframe(value: Any) -> bool:
    return is_kind(value, "pandas", "DataFrame")


def is_series(value: Any) -> bool:
    return is_kind(value, "pandas", "Series")


def is_ndarray(value: Any) -> bool:
    return is_kind(value, "numpy", "ndarray")


def is_array_like(value: Any) -> bool:
    """Tensors, Index objects and other things with a tuple shape and a dtype."""
    if isinstance(value, type):
        return False
    try:
        return isinstance(getattr(value, "shape", None), tuple) and hasattr(value, "dtype")
    except Exception:  # noqa: BLE001 - a property that raises means "not array-like"
        return False


def is_callable_definition(value: Any) -> bool:
    """Functions, methods, builtins and classes: definitions rather than data."""
    return isinstance(value, (type, types.MethodType, types.BuiltinFunctionType)) or inspect.isroutine(value)


def type_name(value: Any) -> str:
    """The short type name a listing shows (``class`` and ``builtin`` for definitions)."""
    if isinstance(value, type):
        return "class"
    if isinstance(value, types.BuiltinFunctionType):
        return "builtin"
    return type(value).__name__


def full_type_name(value: Any) -> str:
    """The qualified type name (module included unless a builtin) a detailed view starts with."""
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
