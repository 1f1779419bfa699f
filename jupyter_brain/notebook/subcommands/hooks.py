"""``%agent hooks``: the user's hooks (``agent/hooks.py``) attached to every ``%%agent`` cell.

``%agent hooks add NAME`` attaches the ``TurnHook`` (or ``Integration``, or a ``TurnHook``
subclass, made with no arguments) that the notebook variable ``NAME`` holds; the
following cells' turns call it at its points, after the built-in integrations. The
hooks are kept on the kernel's ``AgentMagics`` (``magics.hooks``), as its settings are.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

USAGE = "%agent hooks [add NAME | remove NAME | clear]"


def cmd_hooks(magics: Any, rest: list[str]) -> None:
    hooks: dict[str, Any] = magics.hooks
    if not rest:
        if not hooks:
            print("No hooks attached. Define a TurnHook in a cell, then: %agent hooks add NAME")
        for name, hook in hooks.items():
            print(f"  {name}  {type(hook).__name__}")
        return
    action, names = rest[0].lower(), rest[1:]
    if action == "clear" and not names:
        hooks.clear()
        print("No hooks attached.")
    elif action == "add" and len(names) == 1:
        hooks[names[0]] = _hook_named(magics, names[0])
        print(f"Hook {names[0]} attached to the next %%agent cells (%agent hooks remove {names[0]} detaches it).")
    elif action == "remove" and len(names) == 1:
        if hooks.pop(names[0], None) is None:
            raise UsageError(f"%agent hooks: no hook named {names[0]!r} is attached")
        print(f"Hook {names[0]} detached.")
    else:
        raise UsageError(f"usage: {USAGE}")


def _hook_named(magics: Any, name: str) -> Any:
    """The variable ``name`` as a hook: a TurnHook or an Integration (a TurnHook class is made)."""
    from ...agent.hooks import TurnHook, as_integration

    user_ns = magics.shell.user_ns if magics.shell is not None else {}
    if name not in user_ns:
        raise UsageError(f"%agent hooks add: no variable named {name!r} in the notebook")
    value = user_ns[name]
    if isinstance(value, type) and issubclass(value, TurnHook):
        value = value()
    try:
        as_integration(value)
    except TypeError as exc:
        raise UsageError(f"%agent hooks add {name}: {exc}") from None
    return value
