"""Which names in the kernel's namespace are the user's own variables."""

from __future__ import annotations

import sys
import types
from typing import Any

IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})


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
    except Exception:  # noqa: BLE001 - a broken IPython only means no names to hide
        return {}
    if shell is None or getattr(shell, "user_ns", None) is not namespace:
        return {}
    return dict(getattr(shell, "user_ns_hidden", {}) or {})
