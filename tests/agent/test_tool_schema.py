"""The compact tool schema (agent/tool_schema.py): what pydantic adds for itself goes, what
the model needs to call the tool right stays."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from jupyter_brain.agent.tool_schema import compact_schema
from jupyter_brain.agent.tools import tool


def test_an_optional_argument_that_defaults_to_none_is_its_type_alone():
    @tool
    def f(sep: str | None = None, limit: int | None = 10, must: str | None = ...) -> None:  # type: ignore[assignment]
        """F."""

    props = f.input_schema["properties"]
    assert props["sep"] == {"type": "string"}
    # None differs from the default 10: null stays a choice, the default stays
    assert {"type": "null"} in props["limit"]["anyOf"] and props["limit"]["default"] == 10
    # required, yet may be null: null stays a choice
    assert {"type": "null"} in props["must"]["anyOf"] and f.input_schema["required"] == ["must"]


def test_titles_go_but_a_property_named_title_stays():
    class Nested(BaseModel):
        title: str
        mode: Literal["a", "b"] = "a"

    schema = compact_schema({"title": "Args", "type": "object", "additionalProperties": False,
                             "properties": {"title": {"title": "Title", "type": "string"},
                                            "nested": {"$ref": "#/$defs/Nested"}},
                             "$defs": {"Nested": Nested.model_json_schema()}})
    assert schema["properties"]["title"] == {"type": "string"}
    assert "title" not in schema and "additionalProperties" not in schema
    nested = schema["$defs"]["Nested"]
    assert "title" not in nested and set(nested["properties"]) == {"title", "mode"}
    assert nested["properties"]["mode"] == {"default": "a", "enum": ["a", "b"], "type": "string"}
