"""A pydantic argument model from an MCP tool's JSON schema.

The executor validates and repairs arguments against ``ToolSpec.args_model`` (so an MCP
tool gets the same repair of ``"5"`` for 5, camelCase names and wrapped arguments as a
built-in one); the model is told the server's own schema, unchanged. What this cannot
express (``$ref`` cycles, ``allOf``, nested constraints) is left to the server to check.
"""

from __future__ import annotations

import keyword
import re
import warnings
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

_SIMPLE: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": int | float,  # keeps 3 an int on the way to the server
    "boolean": bool,
    "null": type(None),
    "object": dict[str, Any],
}
MAX_DEPTH = 6


def args_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A model whose fields are the schema's properties; unknown arguments are refused
    unless the schema allows additional properties."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    properties = properties if isinstance(properties, dict) else {}
    required = set(schema.get("required") or []) if isinstance(schema, dict) else set()
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})} if isinstance(schema, dict) else {}
    fields: dict[str, Any] = {}
    for index, (prop_name, prop) in enumerate(properties.items()):
        annotation = annotation_for(prop, defs)
        description = prop.get("description") if isinstance(prop, dict) else None
        default = ... if prop_name in required else (prop.get("default") if isinstance(prop, dict) else None)
        if _plain(prop_name):
            fields[prop_name] = (annotation, Field(default, description=description))
        else:
            fields[f"field_{index}"] = (annotation, Field(default, alias=prop_name, description=description))
    more = schema.get("additionalProperties") if isinstance(schema, dict) else None
    extra = "allow" if more is True or isinstance(more, dict) else "forbid"
    model_name = "".join(part.capitalize() for part in re.split(r"[^0-9a-zA-Z]+", name)) + "Args"
    config = ConfigDict(extra=extra, populate_by_name=True, protected_namespaces=())  # type: ignore[typeddict-item]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a field named "schema" or "json" shadows a BaseModel method
        return create_model(model_name, __config__=config, **fields)


def _plain(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith(("_", "model_"))


def annotation_for(prop: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """A Python type for one JSON schema; ``Any`` where a schema says more than types."""
    if not isinstance(prop, dict) or depth > MAX_DEPTH:
        return Any
    ref = prop.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith("#/") else None
        return annotation_for(target, defs, depth + 1) if target is not None else Any
    if "const" in prop and _literal_ok([prop["const"]]):
        return Literal[prop["const"]]
    if isinstance(prop.get("enum"), list) and prop["enum"] and _literal_ok(prop["enum"]):
        return Literal[tuple(prop["enum"])]
    for key in ("anyOf", "oneOf"):
        options = prop.get(key)
        if isinstance(options, list) and options:
            return _union([annotation_for(o, defs, depth + 1) for o in options])
    kind = prop.get("type")
    if isinstance(kind, list):
        return _union([annotation_for({**prop, "type": k}, defs, depth + 1) for k in kind])
    if kind == "array":
        return list[annotation_for(prop.get("items"), defs, depth + 1)]  # type: ignore[misc]
    return _SIMPLE.get(kind, Any) if isinstance(kind, str) else Any


def _union(options: list[Any]) -> Any:
    if any(o is Any for o in options):
        return Any
    unique = list(dict.fromkeys(options))
    return unique[0] if len(unique) == 1 else Union[tuple(unique)]  # noqa: UP007 - built at run time


def _literal_ok(values: list[Any]) -> bool:
    return all(isinstance(v, str | int | float | bool) or v is None for v in values)
