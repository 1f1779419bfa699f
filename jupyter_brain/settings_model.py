"""``AgentOptions``: the settings of one turn as a pydantic model, built from ``SETTINGS``.

Kernel defaults overlaid with the cell's flags; validated once here (types, bounds,
allowed values and their other spellings), so the session and the harness get clean
values. Kept apart from ``jupyter_brain.settings`` because pydantic is not imported at
``%load_ext`` time.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from .settings import CONFIG_KEYS, SETTINGS, Setting


class _OptionsBase(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def _annotation(s: Setting) -> Any:
    allowed = s.allowed()
    kind: Any = Literal[allowed] if allowed else s.type
    return kind | None if s.nullable or s.zero_is_none else kind


def _field(s: Setting) -> tuple[Any, Any]:
    default = None if s.zero_is_none else s.default  # None: "not set" (e.g. the model's window)
    return _annotation(s), Field(default=default, ge=s.ge, gt=s.gt, le=s.le, description=s.help)


def _normaliser(s: Setting) -> Any:
    def normalise(cls: type, value: Any) -> Any:
        if s.zero_is_none and value in (0, "0", ""):
            return None
        if s.allowed() and isinstance(value, str):
            return s.canonical(value)
        return value

    normalise.__name__ = f"_normalise_{s.name}"
    return field_validator(s.name, mode="before")(classmethod(normalise))


# (mypy cannot match the field definitions unpacked from a dict to create_model's overloads)
AgentOptions = create_model(  # type: ignore[call-overload]
    "AgentOptions",
    __base__=_OptionsBase,
    __module__=__name__,
    __doc__="The settings of one turn: kernel defaults overlaid with the cell's flags.",
    __validators__={f"_normalise_{k}": _normaliser(SETTINGS[k]) for k in CONFIG_KEYS},
    **{k: _field(SETTINGS[k]) for k in CONFIG_KEYS},
)
