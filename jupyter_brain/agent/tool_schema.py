"""A tool's JSON schema as the model reads it: pydantic's, without the noise (issue #26).

Every request carries every offered tool's schema, so what the model does not need is
paid for on each call: pydantic's ``title`` on the model and on each field (the name
again), an optional argument's ``anyOf: [{X}, {"type": "null"}]`` plus ``"default":
null`` (an argument the model may leave out needs neither: leaving it out is the None),
and ``additionalProperties: false`` (the arguments are validated against the model all
the same, ``extra="forbid"``, and the model is told about an unknown one). Types,
defaults, bounds, enums, descriptions and ``required`` stay: they are what the model
needs to call the tool right.
"""

from __future__ import annotations

from typing import Any

_NULL = {"type": "null"}


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of pydantic's ``model_json_schema()`` output in its compact form."""
    out = _compact(schema)
    if out.get("additionalProperties") is False:
        del out["additionalProperties"]
    return out


def _compact(node: Any) -> Any:
    if isinstance(node, list):
        return [_compact(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _compact(sub) for name, sub in value.items()}  # names, not keywords
        else:
            out[key] = _compact(value)
    return _optional(out)


def _optional(prop: dict[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [X, null], "default": None, ...}`` → ``{**X, ...}``."""
    branches = prop.get("anyOf")
    if not (isinstance(branches, list) and len(branches) == 2 and _NULL in branches):
        return prop
    if "default" not in prop or prop["default"] is not None:
        return prop  # a required argument, or one whose None differs from its default: null stays a choice
    other = branches[0] if branches[1] == _NULL else branches[1]
    if not isinstance(other, dict) or set(other) & (set(prop) - {"anyOf", "default"}):
        return prop
    return {**other, **{k: v for k, v in prop.items() if k not in ("anyOf", "default")}}
