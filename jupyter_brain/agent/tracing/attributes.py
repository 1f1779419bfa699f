"""Span attributes from event fields: OpenTelemetry's value types, secrets masked.

Attribute values may only be str, bool, int, float or flat lists of one of them; every
string passes the turn's redactor, and a metadata key that names a secret (``api_key``,
``token``, ``password`` …) has its value masked whatever it looks like.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..redact import MASK

Redact = Callable[[str], str]
AttributeValue = str | bool | int | float | list[str] | list[bool] | list[int] | list[float]

PREFIX = "jupyter_brain"
PROMPT_PREFIX = f"{PREFIX}.prompt"
RUN_CONTEXT_PREFIX = f"{PREFIX}.run_context"
MAX_DEPTH = 3  # nested metadata deeper than this becomes one JSON string

_SECRET_KEY = re.compile(r"(?i)(api[_-]?key|secret|passw(?:or)?d|authorization|credentials?|(?:^|[_\-.])token)$")


def attribute_value(value: Any, redact: Redact) -> AttributeValue | None:
    """``value`` as an attribute value (None: leave the attribute out)."""
    if value is None:
        return None
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else list(value)
        if all(isinstance(v, str) for v in items):
            return [redact(v) for v in items]
        if all(isinstance(v, bool) for v in items):
            return list(items)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            return list(items)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
            return [float(v) for v in items]
    return redact(json.dumps(value, default=str, sort_keys=True))


def flatten(prefix: str, mapping: Mapping[str, Any], redact: Redact, depth: int = 0) -> dict[str, AttributeValue]:
    """``{prefix}.{key}`` attributes of a metadata mapping, nested mappings dotted."""
    out: dict[str, AttributeValue] = {}
    for key, value in mapping.items():
        name = f"{prefix}.{key}"
        if _SECRET_KEY.search(str(key)):
            out[name] = MASK
        elif isinstance(value, Mapping) and depth < MAX_DEPTH:
            out.update(flatten(name, value, redact, depth + 1))
        else:
            converted = attribute_value(value, redact)
            if converted is not None:
                out[name] = converted
    return out


def provenance_attributes(prompt: Mapping[str, Any] | None, redact: Redact) -> dict[str, AttributeValue]:
    """``jupyter_brain.prompt.{id,version,tags,engine,render_hash,variables}`` from the
    provenance dict of ``TurnStart.prompt`` (``PromptProvenance.as_dict``)."""
    out: dict[str, AttributeValue] = {}
    for key, value in (prompt or {}).items():
        converted = attribute_value(value, redact)
        if converted is not None:
            out[f"{PROMPT_PREFIX}.{key.removeprefix('prompt_')}"] = converted
    return out


def run_context_attributes(run_context: Mapping[str, Any] | None, redact: Redact) -> dict[str, AttributeValue]:
    """``jupyter_brain.run_context.<key>`` from the harness's ``run_context_metadata``."""
    return flatten(RUN_CONTEXT_PREFIX, run_context or {}, redact)


def clean(attributes: Mapping[str, Any], redact: Redact) -> dict[str, AttributeValue]:
    """Attributes with None values left out and strings masked."""
    out: dict[str, AttributeValue] = {}
    for key, value in attributes.items():
        converted = attribute_value(value, redact)
        if converted is not None:
            out[key] = converted
    return out
