"""A tool's argument model is built once per definition (agent/tool_models.py): closures
made again from the same ``def`` share it; a changed definition gets its own."""

from __future__ import annotations

import functools
import os

from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.tools import default_tools


def _make(limit_default: int = 5):
    @tool
    def top_rows(table: str, limit: int = limit_default) -> str:
        """The first rows of a table.

        Args:
            table: the table's name.
        """
        return f"{table}:{limit}"

    return top_rows


def test_closures_of_one_definition_share_their_model_and_schema():
    first, second = _make(), _make()
    assert first is not second and first.fn is not second.fn
    assert first.args_model is second.args_model
    assert first.input_schema is second.input_schema
    assert first.input_schema["properties"]["table"]["description"] == "the table's name."


def test_a_different_default_is_a_different_model():
    five, ten = _make(5), _make(10)
    assert five.args_model is not ten.args_model
    assert ten.input_schema["properties"]["limit"]["default"] == 10
    assert five.args_model(table="t").limit == 5
    # True == 1, but a default of True is not the default 1
    assert _make(True).args_model is not _make(1).args_model  # type: ignore[arg-type]


def test_a_redefined_function_gets_its_new_signature():
    namespace: dict = {"tool": tool}
    exec("@tool\ndef lookup(key: str) -> str:\n    return key\n", namespace)
    old = namespace["lookup"]
    exec("@tool\ndef lookup(key: str, fuzzy: bool = False) -> str:\n    return key\n", namespace)
    new = namespace["lookup"]
    assert "fuzzy" not in old.input_schema["properties"]
    assert new.input_schema["properties"]["fuzzy"]["default"] is False
    assert new.args_model is not old.args_model


def test_the_same_function_under_another_name_is_another_tool():
    def fetch(url: str) -> str:
        """Fetch a page."""
        return url

    assert tool(fetch).args_model is not tool(name="download")(fetch).args_model
    assert tool(name="download")(fetch).schema()["name"] == "download"


def test_wrappers_and_bound_methods_keep_their_own_signatures():
    def plain(a: int, b: int) -> int:
        return a + b

    @functools.wraps(plain)
    def wrapped(*args, **kwargs):
        return plain(*args, **kwargs)

    class Box:
        def put(self, item: str) -> str:
            return item

    assert set(tool(wrapped).input_schema["properties"]) == {"a", "b"}
    assert set(tool(Box().put).input_schema["properties"]) == {"item"}
    assert set(tool(Box.put).input_schema["properties"]) == {"self", "item"}


def test_built_in_tools_are_fresh_closures_over_the_new_namespace_with_shared_models(tmp_path):
    ns_a, ns_b = {"x": 1}, {"y": 2}
    tools_a = {t.name: t for t in default_tools(ns_a, tmp_path)}
    tools_b = {t.name: t for t in default_tools(ns_b, os.fspath(tmp_path))}
    assert tools_a.keys() == tools_b.keys()
    assert all(tools_a[n].args_model is tools_b[n].args_model for n in tools_a)
    # each cell's tools still read their own namespace
    assert "x" in tools_a["list_variables"]() and "x" not in tools_b["list_variables"]()


def test_a_tool_added_later_is_offered_with_its_own_schema(tmp_path):
    registry = AgentToolRegistry(default_tools({}, tmp_path))
    before = {s["name"] for s in registry.schemas()}

    @tool
    def forecast(months: int) -> str:
        """Forecast revenue."""
        return str(months)

    registry = AgentToolRegistry([*default_tools({}, tmp_path), forecast])
    schemas = {s["name"]: s for s in registry.schemas()}
    assert set(schemas) == before | {"forecast"}
    assert schemas["forecast"]["input_schema"]["required"] == ["months"]
