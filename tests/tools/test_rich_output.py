"""run_python's rich outputs (#13): kept for the widget view that shows the call, so a
figure or table appears once, inside the tool's row; elsewhere nothing changes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

from jupyter_brain.agent.images import ToolResult
from jupyter_brain.tools import python_tools
from jupyter_brain.tools import rich_output as ro


def _run(namespace: dict):
    return python_tools(namespace)[0]


@pytest.fixture(autouse=True)
def _close_figures():
    plt.close("all")
    yield
    plt.close("all")


@pytest.fixture()
def in_view():
    release = ro.route_outputs_to_view()
    yield
    release()


def test_without_a_widget_view_nothing_changes() -> None:
    assert not ro.in_view()
    run = _run({"df": pd.DataFrame({"a": [1, 2]}), "plt": plt})
    assert run("df") == "Out:    a\n0  1\n1  2"  # plain text, as before
    out = run("plt.plot([1, 2]);")
    assert isinstance(out, ToolResult) and out.outputs == []
    assert plt.get_fignums() != []  # left open: the inline backend shows it in the cell, once


def test_a_dataframe_value_becomes_an_html_table(in_view) -> None:
    out = _run({"df": pd.DataFrame({"revenue": [120, 90]})})("df")
    assert isinstance(out, ToolResult)
    assert out.text.startswith("Out:    revenue")  # the model still reads the text repr
    [table] = out.outputs
    assert table["mime_type"] == "text/html" and table["role"] == "value"
    assert "<table" in table["data"] and "<td>120</td>" in table["data"]


def test_a_value_without_a_rich_form_stays_text(in_view) -> None:
    assert _run({})("1 + 1") == "Out: 2"


def test_figures_are_captured_then_closed_so_the_cell_does_not_show_them_again(in_view) -> None:
    out = _run({"plt": plt})("fig, ax = plt.subplots()\nax.plot([1, 3, 2]);")
    assert [im.media_type for im in out.images] == ["image/png"]
    assert plt.get_fignums() == []


def test_a_failing_run_leaves_its_figures_to_the_cell(in_view) -> None:
    from jupyter_brain.agent.tools import ToolError

    with pytest.raises(ToolError):
        _run({"plt": plt})("plt.plot([1, 2])\n1/0")
    assert plt.get_fignums() != []


def test_display_calls_of_the_run_are_captured_not_published(in_view, capsys) -> None:
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    try:
        ns = {"df": pd.DataFrame({"x": [1]})}
        code = ("from IPython.display import display, Markdown\n"
                "display(df)\ndisplay(Markdown('**bold**'))\ndisplay('plain')\nprint('printed')")
        out = _run(ns)(code)
        assert [(o["mime_type"], o["role"]) for o in out.outputs] == [
            ("text/html", "display"), ("text/markdown", "display"), ("text/plain", "display")]
        assert out.outputs[1]["data"] == "**bold**"
        assert out.text == "printed"
        assert "plain" not in capsys.readouterr().out  # not published to the cell
        assert "publish" not in vars(shell.display_pub)  # the publisher is restored after the run
        from IPython.display import display

        display("after")  # outside a run: published as usual
        assert "after" in capsys.readouterr().out
    finally:
        InteractiveShell.clear_instance()


def test_sizes_are_capped_with_a_note() -> None:
    big = ro.pick({"text/html": "<td>x</td>" * 20_000}, "value")
    assert big is not None and big["mime_type"] == "text/plain"
    assert "over the 100,000-character limit" in big["data"]
    image = ro.pick({"image/png": b"\x89PNG" + b"0" * 400_000, "text/plain": "<Figure>"}, "display")
    assert image is not None and image["mime_type"] == "text/plain" and "image output" in image["data"]
    assert ro.pick({"application/javascript": "alert(1)", "image/svg+xml": "<svg/>"}, "display") is None
    capture = ro.OutputCapture()
    for _ in range(ro.MAX_OUTPUTS + 3):
        capture.add({"mime_type": "text/plain", "data": "x", "role": "display"})
    result = capture.result()
    assert len(result) == ro.MAX_OUTPUTS + 1 and "3 more output(s) not shown" in result[-1]["data"]


def test_release_is_idempotent() -> None:
    release = ro.route_outputs_to_view()
    assert ro.in_view()
    release()
    release()
    assert not ro.in_view()
