"""A widget's front-end code goes to the browser once per kernel (issue #40): the first drawn
view of a bundle carries it, later ones only the small loader, which asks the kernel for the
code when its page has not seen it."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_brain.widgets import AgentView, CompareView
from jupyter_brain.widgets._frontend_code import NO_CODE_ESM, forget_sent, frontend_code

from .scripted_events import scripted_turn


@pytest.fixture(autouse=True)
def fresh_kernel():
    forget_sent()
    yield
    forget_sent()


def sent_by(view: Any) -> list[Any]:
    sent: list[Any] = []
    view.send = sent.append
    return sent


def test_only_the_first_drawn_view_carries_the_code() -> None:
    code = frontend_code("agent_view")
    headless = AgentView(drawn=False)  # never drawn: carries nothing and does not count
    first, second = AgentView(), AgentView()
    assert headless._code_js == "" and headless._esm == NO_CODE_ESM
    assert first._code_js == code.js and first._code_css == code.css
    assert second._code_js == "" and second._code_css == ""
    assert first._esm == second._esm == code.loader
    assert code.digest in code.loader and len(code.loader) < 4000 and len(code.js) > 50_000
    for view in (headless, first, second):
        view.close()


def test_each_bundle_is_sent_once_on_its_own() -> None:
    agent = AgentView()
    compare, again = CompareView(["react"]), CompareView(["cot"])
    assert agent._code_js and compare._code_js == frontend_code("compare_view").js and not again._code_js
    assert compare._esm != agent._esm and "compare_view" in compare._esm
    for view in (agent, compare, again):
        view.close()


def test_a_loader_that_has_not_seen_the_code_gets_it_from_the_kernel() -> None:
    AgentView().close()
    view = AgentView()
    sent = sent_by(view)
    code = frontend_code("agent_view")
    view._on_frontend_msg(view, {"kind": "need_code", "digest": code.digest}, [])
    assert sent == [{"kind": "code", "digest": code.digest, "js": code.js, "css": code.css}]
    view._on_frontend_msg(view, {"kind": "need_code", "digest": "another-build"}, [])
    assert len(sent) == 1  # a loader of another build gets nothing (its page reloads it)
    assert not view.frontend_ready  # asking for code is not a rendered view
    view.close()


def test_a_compare_views_loader_is_answered_too() -> None:
    view = CompareView(["react"])
    sent = sent_by(view)
    code = frontend_code("compare_view")
    view._on_front_end_msg(view, {"kind": "need_code", "digest": code.digest}, [])
    assert sent == [code.message()]
    view.close()


def test_a_retired_view_keeps_no_code_in_its_state() -> None:
    view = AgentView()
    for event in scripted_turn():
        view.handle(event)
    view.retire()
    assert view._esm == NO_CODE_ESM and view._code_js == "" and view._code_css == ""


def test_a_rebuilt_bundle_is_sent_again(tmp_path) -> None:
    (tmp_path / "agent_view.js").write_text("export default () => ({});")
    (tmp_path / "agent_view.css").write_text(".a{}")
    first = AgentView(static=tmp_path)
    assert first._code_js.startswith("export default")
    (tmp_path / "agent_view.js").write_text("export default () => ({ render() {} });")
    rebuilt = AgentView(static=tmp_path)
    assert "render" in rebuilt._code_js and rebuilt._esm != first._esm
    first.close()
    rebuilt.close()
