"""MCP tool definitions as ToolSpecs: names, effects, schemas, validation and repair."""

from __future__ import annotations

import mcp_types as types
import pytest

from jupyter_brain.agent.executor import BoundedToolExecutor, ToolTurnState
from jupyter_brain.agent.tools import AgentToolRegistry
from jupyter_brain.mcp.adapter import MCPToolSpec, tool_name, tool_spec
from jupyter_brain.mcp.schema import args_model
from jupyter_brain.providers.base import ToolCall

SCHEMA = {
    "type": "object",
    "title": "searchArguments",
    "properties": {
        "query": {"type": "string", "description": "what to look for"},
        "limit": {"type": "integer", "default": 10},
        "ratio": {"type": "number"},
        "mode": {"enum": ["fast", "exact"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "filters": {"type": "object"},
        "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "class": {"type": "string"},  # not a Python identifier: an alias
        "model_name": {"type": "string"},  # pydantic's protected prefix: an alias
    },
    "required": ["query"],
}


def _tool(name="search", schema=SCHEMA, read_only=None, description="Search the index."):
    annotations = types.ToolAnnotations(read_only_hint=read_only) if read_only is not None else None
    return types.Tool(name=name, description=description, input_schema=schema, annotations=annotations)


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("github", "search_issues", "github__search_issues"),
        ("my-srv", "files.read", "my-srv__files_read"),
        ("s", "naïve tool/name", "s__na_ve_tool_name"),
    ],
)
def test_names_are_server__tool_with_allowed_characters(server, tool, expected):
    assert tool_name(server, tool) == expected


def test_long_names_are_cut_to_64_characters_and_stay_distinct():
    a, b = tool_name("server", "x" * 80 + "a"), tool_name("server", "x" * 80 + "b")
    assert len(a) == len(b) == 64 and a != b


def test_clashing_names_get_a_suffix():
    taken: set[str] = set()
    first = tool_spec("s", _tool("a.b"), lambda **kw: "", taken=taken)
    second = tool_spec("s", _tool("a/b"), lambda **kw: "", taken=taken)
    assert (first.name, second.name) == ("s__a_b", "s__a_b_2")


def test_read_only_hint_reads_everything_else_asks():
    registry = AgentToolRegistry([
        tool_spec("s", _tool("look", read_only=True), lambda **kw: ""),
        tool_spec("s", _tool("change", read_only=False), lambda **kw: ""),
        tool_spec("s", _tool("unknown"), lambda **kw: ""),
    ], permission_mode="ask")
    assert [registry.get(n).effect for n in registry.names()] == ["read", "write", "write"]
    assert [registry.permission_for(n) for n in registry.names()] == ["allow", "ask", "ask"]
    registry.permission_mode = registry.permission_mode.parse("read-only")
    assert [registry.permission_for(n) for n in registry.names()] == ["allow", "deny", "deny"]
    registry.allow("s__change")  # an allow never beats read-only mode
    assert registry.permission_for("s__change") == "deny"
    registry.permission_mode = registry.permission_mode.parse("ask")
    assert registry.permission_for("s__change") == "allow"
    registry.deny("s__look")
    assert registry.permission_for("s__look") == "deny"


def test_the_model_is_told_the_servers_schema_and_description():
    spec = tool_spec("idx", _tool(), lambda **kw: "", timeout_s=7)
    assert isinstance(spec, MCPToolSpec)
    assert spec.schema()["description"] == "Search the index."
    assert spec.input_schema["properties"] == SCHEMA["properties"] and "title" not in spec.input_schema
    assert spec.timeout_s == 7 and spec.retry_on_timeout is False
    assert spec.metadata["mcp_server"] == "idx" and spec.metadata["mcp_tool"] == "search"
    untitled = tool_spec("idx", _tool(description=None, schema={}), lambda **kw: "")
    assert untitled.description == "search (from the MCP server 'idx')"
    assert untitled.input_schema == {"type": "object", "properties": {}}


def test_only_the_given_arguments_are_sent():
    seen = {}
    spec = tool_spec("idx", _tool(), lambda **kw: seen.update(kw) or "ok")
    validated = spec.args_model.model_validate({"query": "q", "class": "c", "model_name": "m", "ratio": 2})
    spec.invoke(validated)
    assert seen == {"query": "q", "class": "c", "model_name": "m", "ratio": 2}
    assert isinstance(seen["ratio"], int)  # a JSON number stays as given


def test_arguments_are_validated_and_repaired_like_built_in_tools():
    sent = []
    spec = tool_spec("idx", _tool(), lambda **kw: sent.append(kw) or "found")
    executor = BoundedToolExecutor(AgentToolRegistry([spec], permission_mode="auto"))
    calls = [
        ToolCall(id="1", name="idx__search", arguments={"query": "a", "limit": "5"}),  # "5" for 5
        ToolCall(id="2", name="idx__search", arguments={"Query": "b", "mode": "exact"}),  # wrong case
        ToolCall(id="3", name="idx__search", arguments={"limit": 3}),  # the required query missing
        ToolCall(id="4", name="idx__search", arguments={"query": "c", "mode": "slow"}),  # not in the enum
    ]
    outcomes = executor.execute(calls, ToolTurnState())
    assert [o.status for o in outcomes] == ["ok", "ok", "invalid", "invalid"]
    assert sent == [{"query": "a", "limit": 5}, {"query": "b", "mode": "exact"}]
    assert "'query' is required" in outcomes[2].output
    assert "Expected arguments: query: string" in outcomes[2].output
    assert "mode" in outcomes[3].output


def test_schema_types():
    model = args_model("t", SCHEMA)
    ok = model.model_validate({"query": "q", "tags": ["a"], "filters": {"x": 1}, "maybe": None})
    assert ok.tags == ["a"] and ok.filters == {"x": 1}
    with pytest.raises(ValueError):
        model.model_validate({"query": "q", "tags": "not a list"})
    with pytest.raises(ValueError):
        model.model_validate({"query": "q", "unknown": 1})  # extra arguments are refused
    loose = args_model("t", {"type": "object", "properties": {}, "additionalProperties": True})
    assert loose.model_validate({"anything": 1}).model_dump() == {"anything": 1}
    refs = args_model("t", {"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}},
                            "$defs": {"P": {"type": "integer"}}, "required": ["p"]})
    assert refs.model_validate({"p": 3}).p == 3
