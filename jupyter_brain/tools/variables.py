"""Tools that let the model see the user's variables without running code.

``list_variables`` gives a one-line summary per variable; ``inspect_variable`` a
detailed view of one, reached by a dotted / indexed path such as ``df.columns`` or
``data['key']``. Paths are parsed, never evaluated: only names, attribute lookups and
item lookups with literal keys are followed, and dunder attributes are refused.

pandas and numpy are recognised by class name and module, so this module never imports
them: a user who has not imported pandas does not pay for it here.
"""

from __future__ import annotations

import ast
import collections.abc
import difflib
import fnmatch
import inspect
import itertools
import sys
import types
import warnings
from typing import Annotated, Any

from pydantic import Field

from jupyter_brain.agent.tools import ToolError, ToolSpec, tool
from jupyter_brain.tools.files import human_size

MAX_LISTED = 150
SUMMARY_CHARS = 160
REPR_CHARS = 2_000
MAX_KEYS = 50
MAX_COLUMNS = 60
DESCRIBE_COLUMNS = 20
IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
_MISSING = object()


def variable_tools(namespace: dict[str, Any]) -> list[ToolSpec]:
    """``list_variables`` and ``inspect_variable`` over ``namespace`` (the kernel's ``user_ns``)."""

    @tool(effect="read")
    def list_variables(pattern: str | None = None, include_callables: bool = False) -> str:
        """List the user's variables with their type and a short summary (shape, columns, length, value).

        Modules and private names (starting with '_') are left out; functions and classes
        only appear with include_callables.

        Args:
            pattern: only names matching this glob (e.g. 'df*') or containing this text; case-insensitive.
            include_callables: also list functions and classes.
        """
        names = user_variable_names(namespace)
        if pattern:
            wanted = pattern.lower()
            glob = any(ch in pattern for ch in "*?[")
            names = [n for n in names if (fnmatch.fnmatch(n.lower(), wanted) if glob else wanted in n.lower())]
        rows: list[tuple[str, str, str]] = []
        hidden = 0
        for name in names:
            value = namespace[name]
            if _is_callable_definition(value) and not include_callables:
                hidden += 1
                continue
            rows.append((name, _type_name(value), summarize(value)))
        notes = []
        if hidden:
            notes.append(f"{hidden} functions/classes hidden; pass include_callables=true to list them")
        if not rows:
            what = f" matching {pattern!r}" if pattern else ""
            return f"No user variables{what}." + (f" ({notes[0]})" if notes else "")
        shown = rows[:MAX_LISTED]
        name_w = min(max(len(r[0]) for r in shown), 30)
        type_w = min(max(len(r[1]) for r in shown), 20)
        lines = [f"{name:<{name_w}}  {kind:<{type_w}}  {text}" for name, kind, text in shown]
        if len(rows) > MAX_LISTED:
            lines.append(f"… ({len(rows) - MAX_LISTED} more; narrow with pattern)")
        header = f"{len(rows)} variable{'s' if len(rows) != 1 else ''}"
        header += (f" ({'; '.join(notes)})" if notes else "") + ":"
        return header + "\n" + "\n".join(lines)

    @tool(effect="read")
    def inspect_variable(name: str, rows: Annotated[int, Field(ge=1, le=50)] = 5) -> str:
        """Show one variable in detail: DataFrames (dtypes, missing values, head, describe),
        arrays (shape, dtype, stats, a slice), dicts (keys), functions (signature, source),
        or a capped repr for anything else.

        name may reach inside a variable with attribute and item lookups using literal
        keys, e.g. df.columns, data['key'], items[0], model.coef_. Nothing is evaluated
        or called; to compute something, use run_python.

        Args:
            name: variable name, optionally followed by .attribute or [literal] lookups.
            rows: how many rows or items to show in previews.
        """
        value = resolve_access_path(namespace, name)
        return describe(name.strip(), value, rows)

    return [list_variables, inspect_variable]


# which names are the user's ----------------------------------------------------
def user_variable_names(namespace: dict[str, Any]) -> list[str]:
    """Names the user defined, sorted case-insensitively; skips privates, modules and IPython's own."""
    hidden = _ipython_hidden(namespace)
    names = []
    for name, value in list(namespace.items()):
        if not isinstance(name, str) or name.startswith("_") or name in IPYTHON_NAMES:
            continue
        if isinstance(value, types.ModuleType):
            continue
        if name in hidden and hidden[name] is value:
            continue
        names.append(name)
    return sorted(names, key=lambda n: (n.lower(), n))


def _ipython_hidden(namespace: dict[str, Any]) -> dict[str, Any]:
    """IPython's own injected names (``user_ns_hidden``), when ``namespace`` is a live shell's."""
    if "IPython" not in sys.modules:
        return {}
    try:
        from IPython import get_ipython  # lazy: already imported by the running kernel

        shell = get_ipython()
    except Exception:
        return {}
    if shell is None or getattr(shell, "user_ns", None) is not namespace:
        return {}
    return dict(getattr(shell, "user_ns_hidden", {}) or {})


def _is_callable_definition(value: Any) -> bool:
    return isinstance(value, (type, types.MethodType, types.BuiltinFunctionType)) or inspect.isroutine(value)


# duck typing for pandas / numpy -------------------------------------------------
def _is_kind(value: Any, package: str, class_name: str) -> bool:
    """Whether ``value`` is ``package``'s ``class_name`` (or a subclass), without importing it."""
    if package not in sys.modules:
        return False
    return any(
        cls.__name__ == class_name and cls.__module__.split(".")[0] == package for cls in type(value).__mro__
    )


def _is_dataframe(value: Any) -> bool:
    return _is_kind(value, "pandas", "DataFrame")


def _is_series(value: Any) -> bool:
    return _is_kind(value, "pandas", "Series")


def _is_ndarray(value: Any) -> bool:
    return _is_kind(value, "numpy", "ndarray")


def _is_array_like(value: Any) -> bool:
    """Tensors, Index objects and other things with a tuple shape and a dtype."""
    if isinstance(value, type):
        return False
    try:
        return isinstance(getattr(value, "shape", None), tuple) and hasattr(value, "dtype")
    except Exception:
        return False


def _type_name(value: Any) -> str:
    if isinstance(value, type):
        return "class"
    if isinstance(value, types.BuiltinFunctionType):
        return "builtin"
    return type(value).__name__


def _full_type_name(value: Any) -> str:
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


# one-line summaries ----------------------------------------------------------------
def summarize(value: Any) -> str:
    """A one-line description: shape and columns, length, or a short repr."""
    try:
        text = _summarize(value)
    except Exception as exc:
        text = f"<summary failed: {type(exc).__name__}>"
    return _clip(text.replace("\n", " "), SUMMARY_CHARS)


def _summarize(value: Any) -> str:
    if _is_dataframe(value):
        n_rows, n_cols = value.shape
        cols = [f"{c} {t}" for c, t in list(value.dtypes.items())[:8]]
        more = f", … (+{n_cols - 8})" if n_cols > 8 else ""
        return f"{n_rows} rows × {n_cols} cols: {', '.join(cols)}{more}"
    if _is_series(value):
        label = f", name {value.name!r}" if value.name is not None else ""
        return f"len {len(value)}, dtype {value.dtype}{label}"
    if _is_array_like(value) and not isinstance(value, (str, bytes)):
        if value.shape == () and hasattr(value, "item"):
            return f"{_short_repr(value)} ({value.dtype})"
        return f"shape {value.shape}, dtype {value.dtype}"
    if isinstance(value, collections.abc.Mapping):
        keys = ", ".join(_short_repr(k, 30) for k in list(itertools.islice(value, 6)))
        more = ", …" if len(value) > 6 else ""
        return f"len {len(value)}" + (f": keys {keys}{more}" if keys else "")
    if isinstance(value, (str, bytes, bytearray)):
        shown = _short_repr(value, 80)
        return shown if len(value) <= 60 else f"len {len(value)}: {shown}"
    if isinstance(value, (list, tuple, set, frozenset, collections.abc.Sized)) and not _is_callable_definition(value):
        try:
            return f"len {len(value)}"
        except Exception:
            pass
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if _is_callable_definition(value):
        try:
            return f"{getattr(value, '__name__', '?')}{inspect.signature(value)}"
        except (TypeError, ValueError):
            return getattr(value, "__name__", repr(value))
    return _short_repr(value, 100)


def _short_repr(value: Any, limit: int = 100) -> str:
    try:
        text = repr(value)
    except Exception as exc:
        return f"<repr failed: {type(exc).__name__}>"
    return _clip(text, limit)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"… ({len(text) - limit} more chars)"


# access paths ----------------------------------------------------------------------
def resolve_access_path(namespace: dict[str, Any], path: str) -> Any:
    """Follow ``name.attr['key'][0]`` by plain lookups; ToolError with suggestions on failure."""
    root, steps = parse_access_path(path)
    if root not in namespace:
        candidates = user_variable_names(namespace)
        close = difflib.get_close_matches(root, candidates, n=5, cutoff=0.6)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        listing = "" if close else _available(candidates)
        raise ToolError(f"No variable named {root!r}.{hint}{listing}")
    value = namespace[root]
    where = root
    for kind, key in steps:
        if kind == "attr":
            value = _get_attr(value, key, where)
            where = f"{where}.{key}"
        else:
            value = _get_item(value, key, where)
            where = f"{where}[{key!r}]"
    return value


def parse_access_path(path: str) -> tuple[str, list[tuple[str, Any]]]:
    """Split ``df.loc['a']`` into its root name and lookup steps; refuse anything else."""
    text = path.strip()
    usage = (
        "use a variable name optionally followed by .attribute or [literal] lookups, "
        "e.g. df.columns, data['key'], items[0]; to compute something use run_python"
    )
    if not text:
        raise ToolError(f"name is empty: {usage}")
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise ToolError(f"cannot parse {path!r} ({exc.msg}): {usage}") from None
    steps: list[tuple[str, Any]] = []
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("__"):
                raise ToolError(f"dunder attributes such as {node.attr!r} are not inspected: {usage}")
            steps.append(("attr", node.attr))
            node = node.value
        elif isinstance(node, ast.Subscript):
            steps.append(("item", _literal_key(node.slice, path, usage)))
            node = node.value
        else:
            raise ToolError(f"{path!r} is not a plain lookup ({type(node).__name__} is not allowed): {usage}")
    return node.id, steps[::-1]


def _literal_key(node: ast.AST, path: str, usage: str) -> Any:
    if isinstance(node, ast.Slice):
        bounds = (node.lower, node.upper, node.step)
        parts = [None if part is None else _literal_key(part, path, usage) for part in bounds]
        return slice(*parts)
    if isinstance(node, ast.Tuple):
        return tuple(_literal_key(elt, path, usage) for elt in node.elts)
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ToolError(f"the key in {path!r} must be a literal such as 'name', 0 or 1:5: {usage}") from None


def _get_attr(value: Any, attr: str, where: str) -> Any:
    try:
        return getattr(value, attr)
    except AttributeError:
        names = [n for n in dir(value) if not n.startswith("_")]
        close = difflib.get_close_matches(attr, names, n=5, cutoff=0.6)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise ToolError(f"{where} ({_type_name(value)}) has no attribute {attr!r}.{hint}") from None
    except Exception as exc:
        raise ToolError(f"reading {where}.{attr} raised {type(exc).__name__}: {exc}") from None


def _get_item(value: Any, key: Any, where: str) -> Any:
    try:
        return value[key]
    except Exception as exc:
        message = f"{where}[{key!r}] failed: {type(exc).__name__}: {_clip(str(exc), 200)}"
        keys = _known_keys(value)
        if keys is not None and isinstance(key, str):
            close = difflib.get_close_matches(key, [k for k in keys if isinstance(k, str)], n=5, cutoff=0.6)
            if close:
                message += f". Did you mean: {', '.join(repr(k) for k in close)}?"
            else:
                message += f". Available keys: {', '.join(_short_repr(k, 40) for k in keys[:20])}"
                message += f", … ({len(keys) - 20} more)" if len(keys) > 20 else ""
        elif isinstance(value, collections.abc.Sized):
            message += f" (length {len(value)})"
        raise ToolError(message) from None


def _known_keys(value: Any) -> list[Any] | None:
    try:
        if _is_dataframe(value):
            return list(value.columns)
        if isinstance(value, collections.abc.Mapping):
            return list(value.keys())
    except Exception:
        return None
    return None


def _available(names: list[str]) -> str:
    if not names:
        return " The namespace has no user variables yet."
    shown = ", ".join(names[:30])
    more = f", … ({len(names) - 30} more)" if len(names) > 30 else ""
    return f" Variables: {shown}{more}."


# detailed views ----------------------------------------------------------------------
def describe(label: str, value: Any, rows: int = 5) -> str:
    """The inspect_variable view of ``value``, capped to a few thousand characters."""
    if _is_dataframe(value):
        sections = _describe_dataframe(value, rows)
    elif _is_series(value):
        sections = _describe_series(value, rows)
    elif _is_ndarray(value):
        sections = _describe_ndarray(value, rows)
    elif isinstance(value, collections.abc.Mapping):
        sections = _describe_mapping(value)
    elif isinstance(value, (str, bytes, bytearray)):
        sections = [f"len {len(value)}", _clip(value if isinstance(value, str) else repr(value), REPR_CHARS)]
    elif isinstance(value, (list, tuple, set, frozenset, collections.abc.Sequence)):
        sections = _describe_collection(value, rows)
    elif isinstance(value, types.ModuleType):
        sections = _describe_module(value)
    elif _is_callable_definition(value):
        sections = _describe_callable(value)
    else:
        sections = _describe_object(value)
    return f"{label}: {_full_type_name(value)}\n" + "\n".join(s for s in sections if s)


def _section(title: str, build: Any) -> str:
    """Run one part of a view; a failure becomes a note rather than losing the whole view."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            body = build()
    except Exception as exc:
        body = f"(unavailable: {type(exc).__name__}: {_clip(str(exc), 200)})"
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
        parts.append(f"value: {_short_repr(arr, REPR_CHARS)}")
    else:
        index = (slice(0, rows),) + (slice(0, 10),) * (arr.ndim - 1)
        shape = tuple(min(n, 10 if i else rows) for i, n in enumerate(arr.shape))

        def preview() -> str:
            with np.printoptions(threshold=500, edgeitems=5, linewidth=120):
                return _clip(repr(arr[index]), REPR_CHARS)

        parts.append(_section(f"first {'×'.join(map(str, shape))} slice", preview))
    return parts


def _describe_mapping(mapping: Any) -> list[str]:
    items = list(itertools.islice(mapping.items(), MAX_KEYS))
    lines = [f"  {_short_repr(k, 60)}: {_type_name(v)} {summarize(v)}" for k, v in items]
    if len(mapping) > MAX_KEYS:
        lines.append(f"  … ({len(mapping) - MAX_KEYS} more keys)")
    return [f"len: {len(mapping)}", "keys:\n" + "\n".join(lines) if lines else "(empty)"]


def _describe_collection(values: Any, rows: int) -> list[str]:
    shown = list(itertools.islice(values, max(rows, 10)))
    lines = [f"  [{i}] {_type_name(v)}: {summarize(v)}" for i, v in enumerate(shown)]
    try:
        total = len(values)
    except Exception:
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
        parts.append("doc:\n" + _clip(doc, 800))
    try:
        source = inspect.getsource(value)
        parts.append("source:\n" + _clip(source, REPR_CHARS))
    except (OSError, TypeError):
        pass
    if isinstance(value, type):
        methods = [n for n, v in vars(value).items() if not n.startswith("_") and callable(v)]
        if methods:
            parts.append(f"methods: {', '.join(methods[:40])}")
    return parts


def _describe_object(value: Any) -> list[str]:
    parts = []
    if _is_array_like(value):
        parts.append(f"shape: {value.shape}, dtype: {value.dtype}")
    parts.append("repr:\n" + _short_repr(value, REPR_CHARS))
    try:
        attributes = {k: v for k, v in vars(value).items() if not k.startswith("_")}
    except TypeError:
        attributes = {}
    if attributes:
        lines = [f"  {k}: {_type_name(v)} {summarize(v)}" for k, v in list(attributes.items())[:30]]
        if len(attributes) > 30:
            lines.append(f"  … ({len(attributes) - 30} more)")
        parts.append("attributes:\n" + "\n".join(lines))
    return parts


def _plain(number: Any) -> str:
    """numpy scalars as plain numbers (``5.5``, not ``np.float64(5.5)``)."""
    item = getattr(number, "item", None)
    return repr(item() if callable(item) else number)


