"""``list_variables`` and ``inspect_variable``: the variable tools as the model sees them."""

from __future__ import annotations

import fnmatch
from typing import Annotated, Any

from pydantic import Field

from jupyter_brain.agent.tools import ToolSpec, tool

from ..values_policy import HIDDEN_NOTE, send_outputs, shape_only
from .access_path import resolve_access_path
from .describe import describe
from .kinds import is_callable_definition, type_name
from .names import user_variable_names
from .summary import summarize

MAX_LISTED = 150


def variable_tools(namespace: dict[str, Any]) -> list[ToolSpec]:
    """``list_variables`` and ``inspect_variable`` over ``namespace`` (the kernel's ``user_ns``)."""

    @tool(effect="read", keywords="variables dataframe df data namespace defined loaded")
    def list_variables(pattern: str | None = None, include_callables: bool = False) -> str:
        """List the user's variables: type and summary (shape, columns, length, value).

        Args:
            pattern: glob (df*) or substring filter on names.
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
            if is_callable_definition(value) and not include_callables:
                hidden += 1
                continue
            rows.append((name, type_name(value), summarize(value)))
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

    @tool(effect="read", keywords="dataframe df columns dtypes shape head describe rows array dict value")
    def inspect_variable(name: str, rows: Annotated[int, Field(ge=1, le=50)] = 5) -> str:
        """Show a variable in detail (DataFrame dtypes, head, describe; array stats; dict keys;
        function source). Nothing is run: compute with run_python.

        Args:
            name: variable name, with optional literal lookups: df.columns, d['k'], xs[0].
            rows: preview rows.
        """
        value = resolve_access_path(namespace, name)
        if not send_outputs():  # the admin's policy: names, types and shapes only
            return f"{name.strip()}: {type_name(value)} — {shape_only(value)} ({HIDDEN_NOTE})"
        return describe(name.strip(), value, rows)

    return [list_variables, inspect_variable]
