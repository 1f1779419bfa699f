"""``agent_view`` / ``close_view`` (#13): the widget gets ``AgentMagics.fold``, and while it
is the cell's view run_python keeps its figures and tables for the widget's tool row."""

from __future__ import annotations

import types

from IPython.core.interactiveshell import InteractiveShell

from jupyter_brain.notebook.views import agent_view, close_view
from jupyter_brain.tools import rich_output
from jupyter_brain.widgets import AgentView, TextView


def test_the_widget_view_takes_the_fold_and_routes_outputs_until_closed() -> None:
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    shell.kernel = types.SimpleNamespace()  # what makes it a kernel with a front-end
    try:
        view = agent_view(shell, fold="never")
        assert isinstance(view, AgentView) and view.fold == "never"
        assert rich_output.in_view()
        close_view(view)
        assert not rich_output.in_view()
        view.close()
    finally:
        InteractiveShell.clear_instance()


def test_without_a_kernel_the_text_view_leaves_outputs_to_the_cell() -> None:
    view = agent_view(types.SimpleNamespace(kernel=None))
    assert isinstance(view, TextView)
    assert not rich_output.in_view()
    close_view(view)


def test_the_fold_setting_reaches_the_cell(shell) -> None:
    magics = shell.magics_manager.registry["AgentMagics"]
    assert magics.fold == "auto"
    shell.run_line_magic("config", 'AgentMagics.fold = "never"')
    assert magics.fold == "never"


def test_a_finished_comparison_becomes_its_bundle_and_the_widget_is_retired() -> None:
    """close_view publishes a CompareView's finished bundle (compare+json and Markdown) in
    place of the widget, as it does an AgentView's turn (#40)."""
    from jupyter_brain.widgets import CompareView

    view = CompareView(["react", "cot"], 1, "Which month?")
    published: list[dict] = []
    view.display_handle = types.SimpleNamespace(update=lambda data, raw=False, **kw: published.append(data))
    close_view(view)
    assert published and "application/vnd.jupyter-brain.compare+json" in published[0]
    assert "text/markdown" in published[0]
    assert view.comm is None  # retired: closed, no widget left in the saved notebook
