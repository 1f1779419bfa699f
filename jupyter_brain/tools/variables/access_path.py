"""Following ``name.attr['key'][0]`` into the user's variables by plain lookups.

Paths are parsed, never evaluated: only names, attribute lookups and item lookups with
literal keys are followed, and dunder attributes are refused. Every failure is a
``ToolError`` that suggests close names or lists what there is.
"""

from __future__ import annotations

import ast
import collections.abc
import difflib
from typing import Any

from jupyter_brain.agent.tools import ToolError

from .kinds import is_dataframe, type_name
from .names import user_variable_names
from .summary import clip, short_repr


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
        raise ToolError(f"{where} ({type_name(value)}) has no attribute {attr!r}.{hint}") from None
    except Exception as exc:  # noqa: BLE001 - a property may raise anything; the model gets it as a ToolError
        raise ToolError(f"reading {where}.{attr} raised {type(exc).__name__}: {exc}") from None


def _get_item(value: Any, key: Any, where: str) -> Any:
    try:
        return value[key]
    except Exception as exc:  # noqa: BLE001 - __getitem__ may raise anything; the model gets it as a ToolError
        message = f"{where}[{key!r}] failed: {type(exc).__name__}: {clip(str(exc), 200)}"
        keys = _known_keys(value)
        if keys is not None and isinstance(key, str):
            close = difflib.get_close_matches(key, [k for k in keys if isinstance(k, str)], n=5, cutoff=0.6)
            if close:
                message += f". Did you mean: {', '.join(repr(k) for k in close)}?"
            else:
                message += f". Available keys: {', '.join(short_repr(k, 40) for k in keys[:20])}"
                message += f", … ({len(keys) - 20} more)" if len(keys) > 20 else ""
        elif isinstance(value, collections.abc.Sized):
            message += f" (length {len(value)})"
        raise ToolError(message) from None


def _known_keys(value: Any) -> list[Any] | None:
    try:
        if is_dataframe(value):
            return list(value.columns)
        if isinstance(value, collections.abc.Mapping):
            return list(value.keys())
    except Exception:  # noqa: BLE001 - no key list is only a less helpful hint
        return None
    return None


def _available(names: list[str]) -> str:
    if not names:
        return " The namespace has no user variables yet."
    shown = ", ".join(names[:30])
    more = f", … ({len(names) - 30} more)" if len(names) > 30 else ""
    return f" Variables: {shown}{more}."
