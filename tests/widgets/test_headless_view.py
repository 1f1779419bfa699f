"""A view nobody draws (a headless kernel: nbclient, nbconvert, papermill) is built and
sent without the view's JS and CSS, and finishes as the same saved turn as a drawn one."""

from __future__ import annotations

from IPython.core.interactiveshell import InteractiveShell

from jupyter_brain.notebook.views import agent_view, close_view
from jupyter_brain.widgets import AgentView
from jupyter_brain.widgets._frontend_code import forget_sent
from jupyter_brain.widgets.agent_view import NO_CODE_ESM

from .scripted_events import scripted_turn


class FakeKernel:
    def __init__(self, request: dict) -> None:
        self.request = request

    def get_parent(self) -> dict:
        return self.request


def _view_in(request: dict) -> AgentView:
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    shell.kernel = FakeKernel(request)
    try:
        view = agent_view(shell)
        assert isinstance(view, AgentView)
        close_view(view)
        return view
    finally:
        InteractiveShell.clear_instance()


def test_a_headless_kernels_view_carries_no_code_and_a_front_ends_does() -> None:
    headless = {"header": {}, "metadata": {}, "content": {"allow_stdin": False}}  # nbclient's request
    lab = {"header": {}, "metadata": {"cellId": "c-1"}, "content": {"allow_stdin": True}}  # JupyterLab's
    forget_sent()
    drawn, undrawn = AgentView(), AgentView(drawn=False)
    assert "export default" in drawn._esm and len(drawn._code_js) > 1000 and drawn._code_css
    assert undrawn._esm == NO_CODE_ESM and undrawn._css == "" and undrawn._code_js == ""
    assert _view_in(lab)._drawn and not _view_in(headless)._drawn
    drawn.close()
    undrawn.close()


def test_an_undrawn_view_finishes_as_the_same_turn() -> None:
    bundles = []
    events = scripted_turn()
    for drawn in (True, False):
        view = AgentView(drawn=drawn)
        for event in events:
            view.handle(event)
        view.close_stream()
        bundles.append((view.finished_bundle(), view.to_markdown()))
        view.retire()
        assert view._esm == NO_CODE_ESM and view._css == ""  # what nbclient saves of either
        assert view._code_js == "" and view._code_css == ""
    assert bundles[0] == bundles[1]
    assert "w19" in bundles[0][1]
