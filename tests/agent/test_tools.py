"""The @tool decorator (schema from signature + docstring) and AgentToolRegistry permissions."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from jupyter_brain.agent.tools import (
    TOOL_CALL_TIMEOUT_S,
    AgentToolRegistry,
    NonRetryableToolError,
    PermissionMode,
    ToolError,
    ToolSpec,
    format_tool_output,
    tool,
)


@tool
def read_csv(path: str, nrows: int = 5, sep: str | None = None) -> str:
    """Read the head of a CSV file.

    Longer explanation on a second paragraph.

    Args:
        path: the file to read,
            relative to the working directory
        nrows (int): how many rows
        sep: the separator; guessed when omitted

    Returns:
        The first rows as text.
    """
    return f"{path}:{nrows}:{sep}"


@tool(effect="write", tool_timeout_s=3, retry_on_timeout=False, parallel_safe=False, category="files")
def write_file(
    path: Annotated[str, Field(description="where to write")],
    content: str = Field("", description="the text"),
    mode: Literal["w", "a"] = "w",
) -> str:
    """Write a file."""
    return "ok"


# ── schema from the signature ────────────────────────────────────────────────


def test_bare_decorator_builds_spec():
    assert isinstance(read_csv, ToolSpec)
    assert read_csv.name == "read_csv"
    assert read_csv.description == "Read the head of a CSV file.\n\nLonger explanation on a second paragraph."
    assert read_csv.effect == "read"


def test_schema_types_defaults_required_and_descriptions():
    schema = read_csv.schema()
    assert set(schema) == {"name", "description", "input_schema"}
    s = schema["input_schema"]
    assert s["type"] == "object"
    assert s["required"] == ["path"]
    assert "additionalProperties" not in s  # noise for the model: extra arguments are refused all the same
    props = s["properties"]
    assert props["path"] == {"type": "string", "description": "the file to read, relative to the working directory"}
    assert props["nrows"] == {"type": "integer", "default": 5, "description": "how many rows"}
    # optional: the model leaves it out (no anyOf-null, no default null); None still validates
    assert props["sep"] == {"type": "string", "description": "the separator; guessed when omitted"}
    assert read_csv.args_model.model_validate({"path": "a.csv", "sep": None}).sep is None
    with pytest.raises(ValidationError):
        read_csv.args_model.model_validate({"path": "a.csv", "bogus": 1})
    assert "title" not in s and all("title" not in p for p in props.values())
    assert "Returns" not in schema["description"]


def test_annotated_and_field_descriptions():
    props = write_file.input_schema["properties"]
    assert props["path"]["description"] == "where to write"
    assert props["content"] == {"type": "string", "default": "", "description": "the text"}
    assert props["mode"]["enum"] == ["w", "a"]
    assert write_file.input_schema["required"] == ["path"]


def test_field_description_beats_docstring():
    @tool
    def f(x: Annotated[int, Field(description="from field")], y: int = Field(1, description="field y")) -> None:
        """F.

        Args:
            x: from docstring
            y: doc y
        """

    props = f.input_schema["properties"]
    assert props["x"]["description"] == "from field"
    assert props["y"]["description"] == "field y"


def test_constraints_are_validated():
    @tool
    def g(n: Annotated[int, Field(ge=0, le=10)]) -> int:
        return n

    assert g.input_schema["properties"]["n"]["minimum"] == 0
    with pytest.raises(ValidationError):
        g.args_model.model_validate({"n": 11})


def test_extra_arguments_forbidden():
    with pytest.raises(ValidationError) as err:
        read_csv.args_model.model_validate({"path": "a", "bogus": 1})
    assert err.value.errors()[0]["type"] == "extra_forbidden"


def test_missing_required():
    with pytest.raises(ValidationError) as err:
        read_csv.args_model.model_validate({})
    assert err.value.errors()[0]["type"] == "missing"


def test_unannotated_params_and_varargs():
    @tool
    def h(a, b=2, *args, **kwargs):
        """H."""
        return a, b

    props = h.input_schema["properties"]
    assert set(props) == {"a", "b"}
    assert h.input_schema["required"] == ["a"]
    assert h.invoke(h.args_model.model_validate({"a": [1]})) == ([1], 2)


def test_name_and_description_options():
    @tool(name="custom", description="Custom text")
    def something(x: int) -> int:
        """Ignored docstring."""
        return x

    assert something.name == "custom" and something.description == "Custom text"
    assert something.args_model.__name__ == "CustomArgs"


def test_no_docstring_description_from_name():
    @tool
    def list_files() -> list:
        return []

    assert list_files.description == "list files"
    assert list_files.input_schema["properties"] == {}


def test_numpy_style_dash_underline_skipped():
    @tool
    def n(a: int) -> None:
        """N.

        Args:
        -----
            a: the a
        """

    assert n.input_schema["properties"]["a"]["description"] == "the a"


def test_invoke_and_call():
    validated = read_csv.args_model.model_validate({"path": "x.csv"})
    assert read_csv.invoke(validated) == "x.csv:5:None"
    assert read_csv("y.csv", 2) == "y.csv:2:None"  # still callable as a function


# ── metadata ─────────────────────────────────────────────────────────────────


def test_metadata_defaults():
    assert TOOL_CALL_TIMEOUT_S == 45
    assert read_csv.metadata == {"tool_timeout_s": 45.0, "retry_on_timeout": True}
    assert read_csv.timeout_s == 45.0
    assert read_csv.retry_on_timeout is True
    assert read_csv.parallel_safe is True


def test_metadata_options():
    assert write_file.effect == "write"
    assert write_file.timeout_s == 3.0
    assert write_file.retry_on_timeout is False
    assert write_file.parallel_safe is False
    assert write_file.metadata["category"] == "files"


def test_spec_without_metadata_uses_defaults():
    class A(BaseModel):
        pass

    spec = ToolSpec(name="x", description="", fn=lambda: 1, args_model=A, effect="execute")
    assert spec.timeout_s == 45.0 and spec.retry_on_timeout is True
    assert spec.parallel_safe is False  # only reads run in parallel by default


def test_parallel_safe_override_for_reads():
    @tool(parallel_safe=False)
    def slow_read() -> None:
        """R."""

    assert slow_read.effect == "read" and slow_read.parallel_safe is False


def test_error_classes():
    assert issubclass(NonRetryableToolError, ToolError)
    assert issubclass(ToolError, Exception)


# ── format_tool_output ───────────────────────────────────────────────────────


class Point(BaseModel):
    x: int


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        ("plain", "plain"),
        ({"a": [1, 2]}, '{"a": [1, 2]}'),
        ("é", "é"),
        ({"p": Point(x=1)}, '{"p": {"x": 1}}'),
        (3.5, "3.5"),
    ],
)
def test_format_tool_output(value, text):
    assert format_tool_output(value) == text


def test_format_tool_output_falls_back_to_repr():
    class Odd:
        def __repr__(self):
            return "<odd>"

    assert format_tool_output(Odd()) == "<odd>"
    assert format_tool_output({1, 2}) in ("{1, 2}", "{2, 1}")


# ── registry ─────────────────────────────────────────────────────────────────


@tool(effect="execute")
def run_python(code: str) -> str:
    """Run code."""
    return code


def registry(mode="ask") -> AgentToolRegistry:
    return AgentToolRegistry([read_csv, write_file, run_python], permission_mode=mode)


def test_registry_basics():
    reg = registry()
    assert reg.names() == ["read_csv", "write_file", "run_python"]
    assert len(reg) == 3 and "read_csv" in reg and "nope" not in reg
    assert reg.get("run_python") is run_python and reg.get("nope") is None
    assert [s.name for s in reg] == reg.names()
    assert [s["name"] for s in reg.schemas()] == reg.names()
    assert [s["name"] for s in reg.schemas(["run_python", "missing", "read_csv"])] == ["run_python", "read_csv"]
    reg.unregister("write_file")
    reg.unregister("never-there")
    assert reg.names() == ["read_csv", "run_python"]


def test_register_plain_function():
    reg = AgentToolRegistry()

    def add(a: int, b: int = 1) -> int:
        """Add."""
        return a + b

    spec = reg.register(add)
    assert isinstance(spec, ToolSpec) and reg.get("add") is spec
    assert spec.effect == "read"


def test_iteration_is_a_snapshot():
    reg = registry()
    for spec in reg:
        reg.unregister(spec.name)  # no "dict changed size" error
    assert len(reg) == 0


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("read-only", {"read_csv": "allow", "write_file": "deny", "run_python": "deny"}),
        ("ask", {"read_csv": "allow", "write_file": "ask", "run_python": "ask"}),
        ("auto", {"read_csv": "allow", "write_file": "allow", "run_python": "allow"}),
    ],
)
def test_permission_for_modes(mode, expected):
    reg = registry(mode)
    assert {n: reg.permission_for(n) for n in reg.names()} == expected
    assert reg.permission_for("unknown") == "deny"


def test_per_tool_overrides():
    reg = registry("ask")
    reg.allow("run_python")
    reg.deny("read_csv")
    assert reg.permission_for("run_python") == "allow"
    assert reg.permission_for("read_csv") == "deny"  # even a read tool can be denied explicitly
    assert reg.permission_for("write_file") == "ask"
    assert reg.overrides == {"run_python": "allow", "read_csv": "deny"}
    reg.overrides["write_file"] = "allow"  # a copy
    assert reg.permission_for("write_file") == "ask"
    reg.clear_override("read_csv")
    assert reg.permission_for("read_csv") == "allow"
    reg.permission_mode = PermissionMode.AUTO
    reg.deny("write_file")
    assert reg.permission_for("write_file") == "deny"


def test_read_only_mode_beats_a_per_tool_allow():
    reg = registry("read-only")
    reg.allow("run_python")
    assert reg.permission_for("run_python") == "deny"
    reg.permission_mode = PermissionMode.ASK
    assert reg.permission_for("run_python") == "allow"


def test_copy_is_independent():
    reg = registry("ask")
    reg.allow("run_python")
    clone = reg.copy()
    assert clone.names() == reg.names() and clone.permission_mode is PermissionMode.ASK
    assert clone.permission_for("run_python") == "allow"
    clone.deny("run_python")
    clone.unregister("read_csv")
    assert reg.permission_for("run_python") == "allow"
    assert "read_csv" in reg


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        ("read-only", PermissionMode.READ_ONLY),
        ("READ_ONLY", PermissionMode.READ_ONLY),
        (" Ask ", PermissionMode.ASK),
        ("auto", PermissionMode.AUTO),
        (PermissionMode.AUTO, PermissionMode.AUTO),
    ],
)
def test_permission_mode_parse(value, mode):
    assert PermissionMode.parse(value) is mode


@pytest.mark.parametrize("bad", ["readonly", "yolo", ""])
def test_permission_mode_parse_errors(bad):
    with pytest.raises(ValueError) as err:
        PermissionMode.parse(bad)
    msg = str(err.value)
    assert repr(bad) in msg
    assert "read-only" in msg and "ask" in msg and "auto" in msg


def test_registry_rejects_bad_mode():
    with pytest.raises(ValueError):
        AgentToolRegistry(permission_mode="sometimes")


def test_default_mode_is_ask():
    assert AgentToolRegistry().permission_mode is PermissionMode.ASK


def test_numpy_style_docstring():
    @tool
    def np_style(path: str, n: int = 1) -> None:
        """Read a file.

        Parameters
        ----------
        path : str
            the file to read
        n : int, optional
            how many lines,
            at most 100

        Returns
        -------
        None
        """

    props = np_style.input_schema["properties"]
    assert props["path"]["description"] == "the file to read"
    assert props["n"]["description"] == "how many lines, at most 100"
    assert np_style.description == "Read a file."


def test_google_style_with_type_in_parentheses():
    @tool
    def g(path: str, n: int = 1) -> None:
        """G.

        Args:
            path (str): the path
            n (int, optional): the count
        """

    props = g.input_schema["properties"]
    assert props["path"]["description"] == "the path"
    assert props["n"]["description"] == "the count"


def test_numpy_parameter_without_text_has_no_description():
    @tool
    def bare(path: str) -> None:
        """B.

        Parameters
        ----------
        path : str
        """

    assert "description" not in bare.input_schema["properties"]["path"]
