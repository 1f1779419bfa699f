"""Argument repair and validation error messages."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jupyter_brain.agent.repair import describe_validation_error, repair_arguments
from jupyter_brain.agent.tools import tool


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    n: int = 5
    ratio: float = 1.0
    verbose: bool = False
    columns: list[str] = Field(default_factory=list)
    options: dict[str, int] = Field(default_factory=dict)
    sep: str | None = None
    limit: Annotated[int | None, Field(description="max")] = 10
    file_path: str = ""


def fix(args, raw=None, model=Args):
    fixed, notes = repair_arguments(args, model, raw)
    return fixed, notes


def valid(args, raw=None, model=Args):
    fixed, notes = fix(args, raw, model)
    return model.model_validate(fixed), notes


@pytest.mark.parametrize(("given", "value"), [("7", 7), (" -3 ", -3), ("3.0", 3), ("+4.00", 4)])
def test_int_from_string(given, value):
    fixed, notes = fix({"path": "a", "n": given})
    assert fixed["n"] == value and type(fixed["n"]) is int
    assert "converted 'n' to a number" in notes


def test_non_integral_string_for_int_is_left_for_a_precise_error():
    fixed, notes = fix({"path": "a", "n": "3.5"})
    assert fixed["n"] == "3.5" and notes == []
    with pytest.raises(ValidationError):
        Args.model_validate(fixed)


@pytest.mark.parametrize(("given", "value"), [("0.25", 0.25), ("2", 2.0), (".5", 0.5), ("1e3", 1000.0)])
def test_float_from_string(given, value):
    fixed, _ = fix({"path": "a", "ratio": given})
    assert fixed["ratio"] == value and isinstance(fixed["ratio"], float)


@pytest.mark.parametrize(
    ("given", "value"),
    [("true", True), ("False", False), ("yes", True), ("no", False), ("1", True), ("0", False)],
)
def test_bool_from_string(given, value):
    model, _ = valid({"path": "a", "verbose": given})
    assert model.verbose is value


def test_json_in_string_for_list_and_dict_fields():
    fixed, notes = fix({"path": "a", "columns": '["x", "y"]', "options": '{"k": 1}'})
    assert fixed["columns"] == ["x", "y"] and fixed["options"] == {"k": 1}
    assert "parsed JSON string for 'columns'" in notes
    assert "parsed JSON string for 'options'" in notes
    Args.model_validate(fixed)


def test_json_in_fenced_string():
    fixed, _ = fix({"path": "a", "columns": '```json\n["x"]\n```'})
    assert fixed["columns"] == ["x"]


def test_unparseable_string_for_list_left_alone():
    fixed, notes = fix({"path": "a", "columns": "x, y"})
    assert fixed["columns"] == "x, y" and notes == []


def test_whole_arguments_as_json_string():
    model, notes = valid('{"path": "a.csv", "n": 2}')
    assert (model.path, model.n) == ("a.csv", 2)
    assert "parsed arguments given as a JSON string" in notes


def test_plain_string_for_single_required_str_field():
    class One(BaseModel):
        code: str
        echo: bool = True

    fixed, notes = fix("print(1)", model=One)
    assert fixed == {"code": "print(1)"}
    assert "used the plain string as 'code'" in notes


def test_plain_string_with_several_required_fields_left_alone():
    class Two(BaseModel):
        a: str
        b: str

    fixed, notes = fix("hello", model=Two)
    assert fixed == "hello" and notes == []


@pytest.mark.parametrize("wrapper", ["input", "arguments", "args", "parameters", "params", "kwargs"])
def test_wrapped_arguments(wrapper):
    model, notes = valid({wrapper: {"path": "a", "n": "2"}})
    assert (model.path, model.n) == ("a", 2)
    assert f"unwrapped arguments from '{wrapper}'" in notes


def test_wrapper_name_that_is_a_real_field_is_not_unwrapped():
    class W(BaseModel):
        input: dict[str, Any]

    fixed, notes = fix({"input": {"path": "a"}}, model=W)
    assert fixed == {"input": {"path": "a"}} and notes == []


@pytest.mark.parametrize("key", ["filePath", "FilePath", "file-path", "FILE_PATH"])
def test_renamed_arguments(key):
    fixed, notes = fix({"path": "a", key: "b"})
    assert fixed == {"path": "a", "file_path": "b"}
    assert f"renamed '{key}' to 'file_path'" in notes


def test_null_for_optional_dropped_but_kept_when_nullable():
    fixed, notes = fix({"path": "a", "n": None, "sep": None, "limit": None})
    assert "n" not in fixed
    assert fixed["sep"] is None and fixed["limit"] is None
    assert notes == ["dropped null for optional 'n'"]
    assert Args.model_validate(fixed).n == 5


def test_null_for_required_kept_for_an_error():
    fixed, notes = fix({"path": None})
    assert fixed == {"path": None} and notes == []


def test_unknown_args_dropped():
    model, notes = valid({"path": "a", "bogus": 1, "another": 2})
    assert model.path == "a"
    assert "dropped unknown argument 'bogus'" in notes and "dropped unknown argument 'another'" in notes


def test_malformed_raw_json_with_trailing_comma():
    model, notes = valid({}, raw='{"path": "a", "columns": ["x", "y",],}')
    assert model.columns == ["x", "y"]
    assert "parsed malformed argument JSON" in notes


def test_malformed_raw_json_beyond_repair():
    fixed, notes = fix({}, raw='{"path": "a"')
    assert fixed == {} and notes == []


def test_raw_ignored_when_arguments_parsed():
    fixed, notes = fix({"path": "a"}, raw="garbage")
    assert fixed == {"path": "a"} and notes == []


def test_non_dict_non_string_left_alone():
    assert fix([1, 2]) == ([1, 2], [])
    assert fix(None) == (None, [])


def test_valid_arguments_unchanged():
    args = {"path": "a", "n": 2, "columns": ["x"], "sep": ","}
    assert fix(dict(args)) == (args, [])


def test_string_fields_are_never_coerced():
    fixed, notes = fix({"path": "123", "sep": "true"})
    assert fixed == {"path": "123", "sep": "true"} and notes == []


def test_nested_model_from_json_string():
    class Inner(BaseModel):
        x: int

    class Outer(BaseModel):
        inner: Inner

    model, notes = valid({"inner": '{"x": 1}'}, model=Outer)
    assert model.inner.x == 1 and notes


def test_with_tool_args_model():
    @tool
    def head(path: str, n: int = 5) -> str:
        """Head."""
        return path

    fixed, notes = repair_arguments({"input": {"Path": "a", "n": "3"}}, head.args_model)
    assert head.args_model.model_validate(fixed).n == 3
    assert notes == ["unwrapped arguments from 'input'", "renamed 'Path' to 'path'", "converted 'n' to a number"]


# ── describe_validation_error ────────────────────────────────────────────────


def error_for(args, model=Args):
    with pytest.raises(ValidationError) as err:
        model.model_validate(args)
    schema = model.model_json_schema()
    return describe_validation_error("read_csv", err.value, schema)


def test_error_names_missing_field():
    msg = error_for({"n": 1})
    assert msg.splitlines()[0] == "Invalid arguments for tool 'read_csv':"
    assert "- 'path' is required but was not given" in msg


def test_error_names_wrong_type_with_value():
    msg = error_for({"path": "a", "n": "lots"})
    assert "- 'n':" in msg
    assert 'got "lots"' in msg
    assert "integer" in msg


def test_error_for_extra_field():
    msg = error_for({"path": "a", "bogus": 1})
    assert "- 'bogus' is not an argument of this tool" in msg


def test_error_nested_location():
    msg = error_for({"path": "a", "columns": ["x", 3]})
    assert "'columns.1'" in msg


def test_error_lists_expected_arguments():
    msg = error_for({})
    line = next(l for l in msg.splitlines() if l.startswith("Expected arguments:"))
    parts = line.removeprefix("Expected arguments: ").split(", ")
    assert "path: string" in parts
    assert "n: integer (optional)" in parts
    assert "verbose: boolean (optional)" in parts
    assert "columns: array of string (optional)" in parts
    # optional-with-null types are named precisely, not as "any"
    assert "sep: string | null (optional)" in parts
    assert "limit: integer | null (optional)" in parts


def test_error_lists_enum_choices():
    from typing import Literal

    class M(BaseModel):
        mode: Literal["w", "a"]

    msg = error_for({"mode": "x"}, model=M)
    assert "mode: one of \"w\", \"a\"" in msg
    assert "'mode':" in msg and 'got "x"' in msg


def test_error_whole_input_wrong_type():
    msg = error_for("not a dict")
    assert "(arguments)" in msg


def test_error_value_is_truncated():
    msg = error_for({"path": "a", "n": "x" * 1000})
    assert "x" * 200 not in msg
