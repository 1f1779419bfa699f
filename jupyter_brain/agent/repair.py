"""Argument repair: fix the common ways models get tool arguments slightly wrong.

Models often send ``"5"`` for 5, a JSON document as a string, ``null`` for an optional
field, arguments wrapped in ``{"input": {...}}`` or camelCase names. Repairing these
silently saves a round trip; anything else becomes a precise error for the model.
"""

from __future__ import annotations

import json
import re
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

MALFORMED_JSON_NOTE = "parsed malformed argument JSON"

_WRAPPERS = ("arguments", "args", "input", "parameters", "params", "kwargs")


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _loads(text: str) -> Any:
    text = text.strip()
    fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.S)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except ValueError:
        # Trailing commas are the most common JSON slip.
        return json.loads(re.sub(r",\s*([}\]])", r"\1", text))


def _accepts(annotation: Any, kinds: tuple[type, ...]) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _accepts(typing.get_args(annotation)[0], kinds)
    if origin in (typing.Union, types.UnionType):
        return any(_accepts(a, kinds) for a in typing.get_args(annotation))
    target = origin or annotation
    return isinstance(target, type) and issubclass(target, kinds)


def _accepts_none(annotation: Any) -> bool:
    if annotation is None or annotation is type(None) or annotation is Any:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _accepts_none(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_accepts_none(a) for a in typing.get_args(annotation))
    return False


def repair_arguments(args: Any, model: type[BaseModel], raw: str | None = None) -> tuple[Any, list[str]]:
    """Best-effort normalisation; returns the new arguments and notes on what changed."""
    notes: list[str] = []
    fields = model.model_fields
    if raw is not None and (args is None or args == {}):
        try:
            args = _loads(raw)
            notes.append(MALFORMED_JSON_NOTE)
        except ValueError:
            return args, notes
    if isinstance(args, str):
        try:
            args = _loads(args)
            notes.append("parsed arguments given as a JSON string")
        except ValueError:
            required = [n for n, f in fields.items() if f.is_required()]
            if len(required) == 1 and _accepts(fields[required[0]].annotation, (str,)):
                args = {required[0]: args}
                notes.append(f"used the plain string as '{required[0]}'")
            else:
                return args, notes
    if not isinstance(args, dict):
        return args, notes
    if len(args) == 1:
        (key, value), = args.items()
        if key in _WRAPPERS and key not in fields and isinstance(value, dict):
            args = value
            notes.append(f"unwrapped arguments from '{key}'")
    fixed: dict[str, Any] = {}
    by_norm = {_norm(n): n for n in fields}
    for key, value in args.items():
        name = key if key in fields else by_norm.get(_norm(key))
        if name is None:
            notes.append(f"dropped unknown argument '{key}'")
            continue
        if name != key:
            notes.append(f"renamed '{key}' to '{name}'")
        field = fields[name]
        if value is None and not _accepts_none(field.annotation) and not field.is_required():
            notes.append(f"dropped null for optional '{name}'")
            continue
        if isinstance(value, str) and not _accepts(field.annotation, (str,)):
            value = _coerce_string(value, field.annotation, name, notes)
        fixed[name] = value
    return fixed, notes


def _coerce_string(value: str, annotation: Any, name: str, notes: list[str]) -> Any:
    text = value.strip()
    if _accepts(annotation, (list, dict, tuple, set, BaseModel)):
        try:
            parsed = _loads(text)
            notes.append(f"parsed JSON string for '{name}'")
            return parsed
        except ValueError:
            return value
    if _accepts(annotation, (int,)) and re.fullmatch(r"[-+]?\d+(?:\.0+)?", text):
        notes.append(f"converted '{name}' to a number")
        return int(float(text))
    if _accepts(annotation, (float,)) and re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        notes.append(f"converted '{name}' to a number")
        return float(text)
    if _accepts(annotation, (bool,)) and text.lower() in ("true", "false", "yes", "no", "1", "0"):
        notes.append(f"converted '{name}' to a boolean")
        return text.lower() in ("true", "yes", "1")
    return value


def describe_validation_error(tool: str, error: ValidationError, schema: dict[str, Any]) -> str:
    """A message precise enough for the model to fix its call on the next try."""
    lines = [f"Invalid arguments for tool '{tool}':"]
    for err in error.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(arguments)"
        got = err.get("input")
        got_text = json.dumps(got, default=str)[:120] if got is not None else "nothing"
        if err.get("type") == "missing":
            lines.append(f"- '{loc}' is required but was not given")
        elif err.get("type") == "extra_forbidden":
            lines.append(f"- '{loc}' is not an argument of this tool")
        else:
            lines.append(f"- '{loc}': {err.get('msg')} (got {got_text})")
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    if props:
        sig = ", ".join(
            f"{n}: {_type_name(p)}{'' if n in required else ' (optional)'}" for n, p in props.items()
        )
        lines.append(f"Expected arguments: {sig}")
    return "\n".join(lines)


def _type_name(prop: dict[str, Any]) -> str:
    """A short type for one schema property: integer, string | null, one of "w", "a"."""
    if "enum" in prop:
        return "one of " + ", ".join(json.dumps(v) for v in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"])
    kind = prop.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array" and isinstance(prop.get("items"), dict) and prop["items"]:
        return f"array of {_type_name(prop['items'])}"
    if kind:
        return str(kind)
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " | ".join(_type_name(p) for p in prop[key])
    if "$ref" in prop:
        return "object"
    return "any"
