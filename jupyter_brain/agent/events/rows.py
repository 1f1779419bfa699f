"""How events and history messages become SQLite rows, cheaply.

An event's JSON is the JSON of its already validated field values (what
``model_dump_json`` gives, at about half the cost); a message's JSON is exactly what
``json.dumps(m, default=str)`` gives; many rows go into one INSERT statement.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import to_json

from .schema import EventBase

# Messages are stored exactly as ``json.dumps(m, default=str)`` wrote them; one encoder
# instance saves building a new one per message.
MESSAGE_JSON = json.JSONEncoder(default=str)

# Rows per INSERT statement: many rows in one statement cost about half the CPU of one
# statement per row (``executemany``), most of it with the GIL released. A few fixed sizes
# keep the statements in the connection's cache.
_CHUNKS = (64, 16, 4, 1)


def insert_rows(db: Any, table: str, width: int, values: list[Any]) -> None:
    """``INSERT INTO table VALUES (...), (...), ...`` of rows of ``width`` values, given
    one after another in ``values``, in chunks of ``_CHUNKS`` rows."""
    one = "(" + ",".join("?" * width) + ")"
    i, total = 0, len(values) // width
    while i < total:
        size = next(c for c in _CHUNKS if c <= total - i)
        db.execute(f"INSERT INTO {table} VALUES " + ",".join([one] * size), values[i * width : (i + size) * width])
        i += size


def _plain_fields(cls: type[EventBase]) -> bool:
    """No custom serializers: the model's JSON is the JSON of its field values."""
    decorators = cls.__pydantic_decorators__
    return not (decorators.field_serializers or decorators.model_serializers)


_PLAIN: dict[type, bool] = {}


def event_json(event: EventBase, text: str | None = None) -> str:
    """``event.model_dump_json()`` (with ``text`` replaced, for merged deltas), about twice
    as fast: the values are already validated, so their JSON is serialised directly, with
    the model's own settings (NaN and infinity as null, bytes as UTF-8)."""
    cls = type(event)
    plain = _PLAIN.get(cls)
    if plain is None:
        plain = _PLAIN[cls] = _plain_fields(cls)
    if not plain:
        if text is not None:
            event = event.model_copy(update={"text": text})
        return event.model_dump_json()
    fields = event.__dict__
    if text is not None:
        fields = {**fields, "text": text}
    return to_json(fields, inf_nan_mode="null").decode()
