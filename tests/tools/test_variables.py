"""list_variables / inspect_variable over a plain namespace dict."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import types

import numpy as np
import pandas as pd
import pytest

from jupyter_brain.agent.tools import ToolError
from jupyter_brain.tools import variable_tools


def _tools(namespace: dict) -> dict:
    return {spec.name: spec for spec in variable_tools(namespace)}


def _helper(x: int, y: int = 2) -> int:
    """Add two numbers."""
    return x + y


class Model:
    def __init__(self) -> None:
        self.weights = [0.1, 0.2]
        self.name = "demo"
        self._private = "hidden"


@pytest.fixture
def ns() -> dict:
    return {
        "df": pd.DataFrame({"price": [1.5, 2.5, None, 4.0], "city": ["a", "b", "c", "d"], "qty": [1, 2, 3, 4]}),
        "s": pd.Series([1, 2, 3], name="counts"),
        "arr": np.arange(12, dtype=float).reshape(3, 4),
        "config": {"lr": 0.01, "layers": [64, 32], "nested": {"deep": 1}},
        "items": ["x", "y", "z"],
        "n": 42,
        "title": "hello",
        "model": Model(),
        "helper": _helper,
        "Model": Model,
        "_private": 1,
        "os": os,
        "In": [""],
        "Out": {},
        "exit": object(),
        "quit": object(),
        "get_ipython": lambda: None,
    }


# list_variables ----------------------------------------------------------------------
def test_list_variables_summarises_user_variables(ns: dict) -> None:
    out = _tools(ns)["list_variables"]()
    lines = out.splitlines()
    assert lines[0] == "8 variables (2 functions/classes hidden; pass include_callables=true to list them):"
    names = [line.split()[0] for line in lines[1:]]
    assert names == ["arr", "config", "df", "items", "model", "n", "s", "title"]
    row = {line.split()[0]: line for line in lines[1:]}
    assert "DataFrame" in row["df"] and "4 rows × 3 cols: price float64, city" in row["df"] and "qty int64" in row["df"]
    assert "Series" in row["s"] and "len 3, dtype int64, name 'counts'" in row["s"]
    assert "ndarray" in row["arr"] and "shape (3, 4), dtype float64" in row["arr"]
    assert "dict" in row["config"] and "len 3: keys 'lr', 'layers', 'nested'" in row["config"]
    assert "list" in row["items"] and "len 3" in row["items"]
    assert row["n"].split()[-1] == "42"
    assert "'hello'" in row["title"]
    assert "Model" in row["model"]
    for hidden in ["_private", "os", "In", "Out", "exit", "quit", "get_ipython", "helper"]:
        assert hidden not in row


def test_list_variables_sorted_case_insensitively() -> None:
    out = _tools({"b": 1, "A": 2, "c": 3, "a2": 4})["list_variables"]()
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["A", "a2", "b", "c"]


def test_list_variables_include_callables(ns: dict) -> None:
    out = _tools(ns)["list_variables"](include_callables=True)
    assert "hidden" not in out.splitlines()[0]
    row = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert row["helper"].split() == ["helper", "function", "_helper(x:", "'int',", "y:", "'int'", "=", "2)", "->", "'int'"]
    assert row["Model"].split()[:3] == ["Model", "class", "Model()"]


def test_list_variables_pattern_glob_and_substring(ns: dict) -> None:
    tools = _tools(ns)
    glob = tools["list_variables"]("*i*")
    assert [line.split()[0] for line in glob.splitlines()[1:]] == ["config", "items", "title"]
    sub = tools["list_variables"]("DF")
    assert [line.split()[0] for line in sub.splitlines()[1:]] == ["df"]
    assert tools["list_variables"]("nothing*") == "No user variables matching 'nothing*'."


def test_list_variables_caps_entries() -> None:
    ns = {f"v{i:03}": i for i in range(200)}
    out = _tools(ns)["list_variables"]()
    assert out.splitlines()[0] == "200 variables:"
    assert out.splitlines()[-1] == "… (50 more; narrow with pattern)"
    assert len(out.splitlines()) == 152


def test_list_variables_survives_a_broken_repr() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("boom")

    out = _tools({"b": Broken()})["list_variables"]()
    assert "b  Broken  <repr failed: RuntimeError>" in out


def test_list_variables_skips_ipython_hidden_names(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython

    injected = object()
    ns = {"injected": injected, "redefined": 5, "mine": 1}
    shell = types.SimpleNamespace(user_ns=ns, user_ns_hidden={"injected": injected, "redefined": 4})
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    out = _tools(ns)["list_variables"]()
    names = [line.split()[0] for line in out.splitlines()[1:]]
    assert names == ["mine", "redefined"]


# inspect_variable ----------------------------------------------------------------------
def test_inspect_dataframe(ns: dict) -> None:
    out = _tools(ns)["inspect_variable"]("df", 2)
    assert out.startswith("df: pandas.DataFrame\nshape: 4 rows × 3 columns")
    assert "price                float64      1 missing" in out
    assert "qty                  int64" in out
    head = out.split("head(2):\n")[1].split("\ndescribe()")[0].splitlines()
    assert len(head) == 3  # header + 2 rows
    assert "1.5" in head[1] and "2.5" in head[2]
    describe = out.split("describe() of numeric columns:\n")[1]
    assert "mean" in describe and "qty" in describe and "city" not in describe


def test_inspect_dataframe_without_numeric_columns() -> None:
    out = _tools({"t": pd.DataFrame({"a": ["x", "y"]})})["inspect_variable"]("t")
    assert "(no numeric columns)" in out


def test_inspect_series(ns: dict) -> None:
    out = _tools(ns)["inspect_variable"]("s")
    assert "len: 3, dtype: int64, name: 'counts', missing: 0" in out
    assert "describe():" in out and "mean" in out
    city = _tools(ns)["inspect_variable"]("df['city']")
    assert city.startswith("df['city']: pandas.Series")
    assert "most common values" in city


def test_inspect_ndarray(ns: dict) -> None:
    out = _tools(ns)["inspect_variable"]("arr")
    assert "shape: (3, 4), dtype: float64, size: 12" in out
    assert "min 0.0, max 11.0, mean 5.5" in out
    assert "array([[ 0.,  1.,  2.,  3.]," in out


def test_inspect_large_ndarray_shows_a_small_slice() -> None:
    big = np.ones((1000, 500))
    big[0, 0] = np.nan
    out = _tools({"big": big})["inspect_variable"]("big", 3)
    assert "NaN count 1" in out and "min 1.0, max 1.0, mean 1.0" in out
    assert "first 3×10 slice" in out
    assert len(out) < 1_500


def test_inspect_dict_caps_keys() -> None:
    data = {f"k{i}": i for i in range(80)}
    out = _tools({"data": data})["inspect_variable"]("data")
    assert "len: 80" in out and "'k0': int 0" in out and "'k49'" in out and "'k50'" not in out
    assert "… (30 more keys)" in out


def test_inspect_other_object_caps_repr(ns: dict) -> None:
    class Long:
        def __repr__(self) -> str:
            return "L" * 10_000

    out = _tools({"obj": Long()})["inspect_variable"]("obj")
    assert "L" * 2_000 in out and "… (8000 more chars)" in out and len(out) < 2_300
    model = _tools(ns)["inspect_variable"]("model")
    assert "weights: list len 2" in model and "name: str 'demo'" in model and "_private" not in model


def test_inspect_function_shows_signature_doc_and_source(ns: dict) -> None:
    out = _tools(ns)["inspect_variable"]("helper")
    assert "signature: _helper(x: 'int', y: 'int' = 2) -> 'int'" in out  # string annotations: never evaluated
    assert "Add two numbers." in out
    assert "return x + y" in out


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("df.columns", "Index(['price', 'city', 'qty']"),
        ("config['layers']", "[0] int: 64"),
        ('config["nested"]["deep"]', "repr:\n1"),
        ("items[0]", "x"),
        ("items[-1]", "z"),
        ("items[1:3]", "len: 2"),
        ("arr[0]", "shape: (4,)"),
        ("arr[1, 2]", "6.0"),
        ("df.loc[0, 'city']", "a"),
        ("model.weights", "[1] float: 0.2"),
    ],
)
def test_inspect_follows_safe_lookups(ns: dict, path: str, expected: str) -> None:
    assert expected in _tools(ns)["inspect_variable"](path)


@pytest.mark.parametrize(
    "path",
    ["helper(1)", "__import__('os')", "df.__class__", "config[key]", "n + 1", "[x for x in items]", "items[len(items)]", "", "df["],
)
def test_inspect_refuses_anything_but_lookups(ns: dict, path: str) -> None:
    calls = []
    ns["helper"] = lambda *a: calls.append(a)
    with pytest.raises(ToolError, match="run_python|empty|dunder|literal"):
        _tools(ns)["inspect_variable"](path)
    assert calls == []


def test_inspect_never_calls_code_on_lookup_refusal(ns: dict) -> None:
    with pytest.raises(ToolError):
        _tools(ns)["inspect_variable"]("os.system('echo hacked')")


def test_unknown_name_lists_close_matches(ns: dict) -> None:
    with pytest.raises(ToolError, match=r"No variable named 'dff'\. Did you mean: df\?"):
        _tools(ns)["inspect_variable"]("dff")
    with pytest.raises(ToolError, match=r"No variable named 'zzz'\. Variables: arr, config, df"):
        _tools(ns)["inspect_variable"]("zzz")


def test_failed_lookups_explain_themselves(ns: dict) -> None:
    tools = _tools(ns)
    with pytest.raises(ToolError, match=r"config\['lrr'\] failed: KeyError.*Did you mean: 'lr'\?"):
        tools["inspect_variable"]("config['lrr']")
    with pytest.raises(ToolError, match=r"Available keys: 'lr', 'layers', 'nested'"):
        tools["inspect_variable"]("config['zzzz']")
    with pytest.raises(ToolError, match=r"df\['prise'\] failed: KeyError.*Did you mean: 'price'\?"):
        tools["inspect_variable"]("df['prise']")
    with pytest.raises(ToolError, match=r"df \(DataFrame\) has no attribute 'colums'\. Did you mean: columns"):
        tools["inspect_variable"]("df.colums")
    with pytest.raises(ToolError, match=r"items\[10\] failed: IndexError.*\(length 3\)"):
        tools["inspect_variable"]("items[10]")


def test_inspect_rows_is_bounded_by_the_schema(ns: dict) -> None:
    model = _tools(ns)["inspect_variable"].args_model
    with pytest.raises(Exception):
        model(name="df", rows=0)
    with pytest.raises(Exception):
        model(name="df", rows=500)


def test_scalars_and_nan(ns: dict) -> None:
    out = _tools({"x": math.nan, "flag": True})["list_variables"]()
    assert "x     float  nan" in out and "flag  bool   True" in out


def test_importing_and_using_the_tools_pulls_in_no_heavy_modules() -> None:
    script = (
        "import sys\n"
        "from jupyter_brain.tools import default_tools\n"
        "ns = {'a': [1, 2], 'd': {'k': 1}}\n"
        "tools = {t.name: t for t in default_tools(ns, '.')}\n"
        "tools['list_variables'](); tools['inspect_variable']('a'); tools['inspect_variable']('d')\n"
        "tools['run_python']('b = 1')\n"
        "bad = [m for m in ('IPython', 'pandas', 'numpy', 'matplotlib', 'ipywidgets', 'anywidget') if m in sys.modules]\n"
        "print(bad)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
