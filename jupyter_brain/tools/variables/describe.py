"""The detailed ``inspect_variable`` view of each kind of value.

DataFrames (dtypes, missing values, head, describe), Series, numpy arrays (stats and a
slice), mappings, sequences, modules, functions and classes, and any other object.
Each view is a list of sections; a section that fails becomes a note, so one broken
property never loses the whole view. Capped to a few thousand characters.
"""

from __future__ import annotations

import collections.abc
import inspect
import itertools
import sys
import types
import warnings
from typing import Any

from jupyter_brain.tools.files import human_size

from .kinds import full_type_name, is_array_like, is_callable_definition, is_dataframe, is_ndarray, is_series, type_name
from .summary import clip, short_repr, summarize

REPR_CHARS = 2_000
MAX_KEYS = 50
MAX_COLUMNS = 60
DESCRIBE_COLUMNS = 20


def describe(label: str, value: Any, rows: int = 5) -> str:
    """The inspect_variable view of ``value``, capped to a few thousand characters."""
    if is_dataframe(value):
        sections = _describe_dataframe(value, rows)
    elif is_series(value):
        sections = _describe_series(value, rows)
    elif is_ndarray(value):
        sections = _describe_ndarray(value, rows)
    elif isinstance(value, collections.abc.Mapping):
        sections = _describe_mapping(value)
    elif isinstance(value, (str, bytes, bytearray)):
        sections = [f"len {len(value)}", clip(value if isinstance(value, str) else repr(value), REPR_CHARS)]
    elif isinstance(value, (list, tuple, set, frozenset, collections.abc.Sequence)):
        sections = _describe_collection(value, rows)
    elif isinstance(value, types.ModuleType):
        sections = _describe_module(value)
    elif is_callable_definition(value):
        sections = _describe_callable(value)
    else:
        sections = _describe_object(value)
    return f"{label}: {full_type_name(value)}\n" + "\n".join(s for s in sections if s)


def _section(title: str, build: Any) -> str:
    """Run one part of a view; a failure becomes a note rather than losing the whole view."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            body = build()
    except Exception as exc:  # noqa: BLE001 - one failing part must not lose the whole view
        body = f"(unavailable: {type(exc).__name__}: {clip(str(exc), 200)})"
    return f"{title}:\n{body}" if title else body


def _describe_dataframe(df: Any, rows: int) -> list[str]:
    n_rows, n_cols = df.shape

    def columns() -> str:
        counts = df.count()
        lines = []
        for col, dtype in list(df.dtypes.items())[:MAX_COLUMNS]:
            missing = n_rows - int(counts[col])
            note = f" {missing} missing" if missing else ""
            lines.append(f"  {str(col)[:40]:<20} {str(dtype):<12}{note}".rstrip())
        if n_cols > MAX_COLUMNS:
            lines.append(f"  … ({n_cols - MAX_COLUMNS} more columns)")
        return "\n".join(lines)

    def numeric_summary() -> str:
        numeric = df.select_dtypes(include="number")
        if numeric.shape[1] == 0:
            return "(no numeric columns)"
        text = numeric.iloc[:, :DESCRIBE_COLUMNS].describe().to_string(max_colwidth=30)
        extra = numeric.shape[1] - DESCRIBE_COLUMNS
        return text + (f"\n… ({extra} more numeric columns)" if extra > 0 else "")

    return [
        f"shape: {n_rows} rows × {n_cols} columns",
        _section("", lambda: f"memory: {human_size(int(df.memory_usage(deep=False).sum()))}"),
        _section("columns (dtype, missing)", columns),
        _section(f"head({rows})", lambda: df.head(rows).to_string(max_cols=20, max_colwidth=50)),
        _section("describe() of numeric columns", numeric_summary),
    ]


def _describe_series(series: Any, rows: int) -> list[str]:
    kind = getattr(series.dtype, "kind", "O")

    def stats() -> str:
        if kind in "biuf":
            return series.describe().to_string()
        return series.value_counts().head(10).to_string()

    missing = _section("", lambda: str(int(series.isna().sum())))
    return [
        f"len: {len(series)}, dtype: {series.dtype}, name: {series.name!r}, missing: {missing}",
        _section(f"head({rows})", lambda: series.head(rows).to_string()),
        _section("describe()" if kind in "biuf" else "most common values", stats),
    ]


def _describe_ndarray(arr: Any, rows: int) -> list[str]:
    np = sys.modules["numpy"]
    parts = [f"shape: {arr.shape}, dtype: {arr.dtype}, size: {arr.size}, memory: {human_size(int(arr.nbytes))}"]
    if arr.dtype.kind in "biuf" and arr.size:

        def stats() -> str:
            nan_note = ""
            if arr.dtype.kind == "f":
                nans = int(np.isnan(arr).sum())
                nan_note = f", NaN count {nans}" if nans else ""
            return (
                f"min {_plain(np.nanmin(arr))}, max {_plain(np.nanmax(arr))}, mean {_plain(np.nanmean(arr))}{nan_note}"
            )

        parts.append(_section("", stats))
    if arr.ndim == 0:
        parts.append(f"value: {short_repr(arr, REPR_CHARS)}")
    else:
        index = (slice(0, rows),) + (slice(0, 10),) * (arr.ndim - 1)
        shape = tuple(min(n, 10 if i else rows) for i, n in enumerate(arr.shape))

        def preview() -> str:
            with np.printoptions(threshold=500, edgeitems=5, linewidth=120):
                return clip(repr(arr[index]), REPR_CHARS)

        parts.append(_section(f"first {'×'.join(map(str, shape))} slice", preview))
    return parts


def _describe_mapping(mapping: Any) -> list[str]:
    items = list(itertools.islice(mapping.items(), MAX_KEYS))
    lines = [f"  {short_repr(k, 60)}: {type_name(v)} {summarize(v)}" for k, v in items]
    if len(mapping) > MAX_KEYS:
        lines.append(f"  … ({len(mapping) - MAX_KEYS} more keys)")
    return [f"len: {len(mapping)}", "keys:\n" + "\n".join(lines) if lines else "(empty)"]


def _describe_collection(values: Any, rows: int) -> list[str]:
    shown = list(itertools.islice(values, max(rows, 10)))
    lines = [f"  [{i}] {type_name(v)}: {summarize(v)}" for i, v in enumerate(shown)]
    try:
        total = len(values)
    except Exception:  # noqa: BLE001 - an iterable without a working len: count what was shown
        total = len(shown)
    if total > len(shown):
        lines.append(f"  … ({total - len(shown)} more items)")
    return [f"len: {total}", "items:\n" + "\n".join(lines) if lines else "(empty)"]


def _describe_module(module: types.ModuleType) -> list[str]:
    version = getattr(module, "__version__", None)
    return [
        f"module {module.__name__}" + (f" {version}" if version else ""),
        f"file: {getattr(module, '__file__', None) or '(built-in)'}",
    ]


def _describe_callable(value: Any) -> list[str]:
    parts = []
    try:
        parts.append(f"signature: {getattr(value, '__name__', '?')}{inspect.signature(value)}")
    except (TypeError, ValueError):
        pass
    doc = inspect.getdoc(value)
    if doc:
        parts.append("doc:\n" + clip(doc, 800))
    try:
        source = inspect.getsource(value)
        parts.append("source:\n" + clip(source, REPR_CHARS))
    except (OSError, TypeError):
        pass
    if isinstance(value, type):
        methods = [n for n, v in vars(value).items() if not n.startswith("_") and callable(v)]
        if methods:
            parts.append(f"methods: {', '.join(methods[:40])}")
    return parts


def _describe_object(value: Any) -> list[str]:
    parts = []
    if is_array_like(value):
        parts.append(f"shape: {value.shape}, dtype: {value.dtype}")
    parts.append("repr:\n" + short_repr(value, REPR_CHARS))
    try:
        attributes = {k: v for k, v in vars(value).items() if not k.startswith("_")}
    except TypeError:
        attributes = {}
    if attributes:
        lines = [f"  {k}: {type_name(v)} {summarize(v)}" for k, v in list(attributes.items())[:30]]
        if len(attributes) > 30:
            lines.append(f"  … ({len(attributes) - 30} more)")
        parts.append("attributes:\n" + "\n".join(lines))
    return parts


def _plain(number: Any) -> str:
    """numpy scalars as plain numbers (``5.5``, not ``np.float64(5.5)``)."""
    item = getattr(number, "item", None)
    return repr(item() if callable(item) else number)
