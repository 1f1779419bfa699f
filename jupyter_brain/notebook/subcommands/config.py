"""``%agent config [KEY=VALUE ...]``: show or set the kernel's defaults.

The keys, their types and allowed values are ``jupyter_brain.settings``; the values are
checked together by ``AgentOptions`` before any is set, so a bad one changes nothing.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ...settings import CONFIG_KEYS, SETTINGS
from ..options import validated

_TRUE = ("1", "true", "yes", "on")
_NONE = ("", "none", "None")


def cmd_config(magics: Any, rest: list[str]) -> None:
    if not rest:
        for key, value in magics.defaults().items():
            print(f"{key} = {value!r}")
        return
    updates: dict[str, Any] = {}
    for item in rest:
        if "=" not in item:
            raise UsageError(f"%agent config: expected KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        key = key.strip().replace("-", "_")
        if key not in CONFIG_KEYS:
            raise UsageError(f"%agent config: unknown key {key!r}; keys: {', '.join(CONFIG_KEYS)}")
        updates[key] = value.strip()
    merged = {key: _typed(key, value) for key, value in {**magics.defaults(), **updates}.items()}
    options = validated(merged, "%agent config")
    for key in updates:
        value = getattr(options, key)
        if value is None and SETTINGS[key].zero_is_none:
            value = 0  # the trait writes "not set" as 0
        setattr(magics, key, value)
    print("  ".join(f"{k}={getattr(magics, k)!r}" for k in updates))


def _typed(key: str, value: Any) -> Any:
    """The text of ``KEY=VALUE`` as the setting's type where pydantic would not convert it."""
    if not isinstance(value, str):
        return value
    s = SETTINGS[key]
    if s.nullable and value in _NONE:
        return None
    if s.type is bool:
        return value.lower() in _TRUE
    return value
