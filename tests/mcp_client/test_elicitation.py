"""Elicitation against server-everything 2026.8.31 (pinned in tests/mcp_client/npm): the
capability is declared, so its elicitation tools are offered; a form request reaches the
kernel's elicitor with the schema's fields, and its answer (accept, decline, cancel) reaches
the server; a URL request names its URL; without an elicitor a request is declined at once."""

from __future__ import annotations

import pytest

from jupyter_brain.mcp.elicitation import ElicitationAnswer, ElicitationRequest, checked_content

from .servers import npm_entry, stdio_entry, write_config

pytestmark = pytest.mark.mcp_server


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    from jupyter_brain.mcp.manager import MCPManager

    folder = tmp_path_factory.mktemp("everything-elicit")
    path = write_config(folder / "data", {"ev": npm_entry("mcp-server-everything", "stdio")})
    manager = MCPManager(startup_timeout_s=120)
    manager.tools(path, report=None)
    yield manager, path
    manager.shutdown()


def _tools(manager, path):
    return {s.name: s for s in manager.tools(path, report=None)}


def test_elicitation_tools_are_offered_and_a_form_is_answered(everything):
    manager, path = everything
    tools = _tools(manager, path)
    assert {"ev__trigger-elicitation-request", "ev__trigger-url-elicitation"} <= set(tools)
    asked: list[ElicitationRequest] = []

    def elicitor(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        content, error = checked_content(request, {"name": "Ada Lovelace", "check": "true", "integer": "7"})
        assert error == ""
        return ElicitationAnswer("accept", content)

    manager.set_elicitor(elicitor)
    try:
        text = str(tools["ev__trigger-elicitation-request"]())
    finally:
        manager.set_elicitor(None)
    (request,) = asked
    assert request.server == "ev" and request.mode == "form"
    assert request.message == "Please provide inputs for the following fields:"
    assert request.required == ("name",) and request.fields["integer"]["default"] == 42
    assert "User provided the requested information" in text
    assert "- Name: Ada Lovelace" in text and "- Agreed to terms: true" in text and "- Favorite Integer: 7" in text


@pytest.mark.parametrize(("action", "said"), [("decline", "User declined"), ("cancel", "User cancelled")])
def test_decline_and_cancel_reach_the_server(everything, action, said):
    manager, path = everything
    manager.set_elicitor(lambda request: ElicitationAnswer(action))
    try:
        text = str(_tools(manager, path)["ev__trigger-elicitation-request"]())
    finally:
        manager.set_elicitor(None)
    assert said in text


def test_without_an_elicitor_the_request_is_declined_at_once(everything):
    manager, path = everything
    text = str(_tools(manager, path)["ev__trigger-elicitation-request"]())
    assert "User declined" in text


def test_a_url_request_names_its_url(everything):
    manager, path = everything
    asked: list[ElicitationRequest] = []

    def elicitor(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer("accept")

    manager.set_elicitor(elicitor)
    try:
        text = str(_tools(manager, path)["ev__trigger-url-elicitation"](url="https://example.org/sign-in",
                                                                       message="Sign in to continue."))
    finally:
        manager.set_elicitor(None)
    (request,) = asked
    assert (request.mode, request.url, request.message) == ("url", "https://example.org/sign-in", "Sign in to continue.")
    assert request.elicitation_id and request.key() == ElicitationRequest(
        "ev", "url", "Sign in to continue.", url="https://example.org/sign-in").key()
    assert "accept" in text.lower()


def test_form_values_are_typed_per_the_schema():
    request = ElicitationRequest("s", "form", "m", fields={"n": {"type": "integer", "title": "N"},
                                                         "ok": {"type": "boolean"}, "tags": {"type": "array"}},
                                 required=("n",))
    assert checked_content(request, {"n": "3", "ok": False, "tags": "a"}) == ({"n": 3, "ok": False, "tags": ["a"]}, "")
    assert checked_content(request, {"ok": True}) == (None, "N is required")
    assert checked_content(request, {"n": "x"}) == (None, "N must be a whole number")


def test_a_2026_07_28_input_required_result_is_answered_by_the_same_elicitor(manager, tmp_path):
    """The demo server (Python SDK 2.x) speaks 2026-07-28: its question comes back as an
    ``input_required`` result, which the SDK answers through our callback and retries."""
    path = write_config(tmp_path / "data", {"demo": stdio_entry()})
    tools = _tools(manager, path)
    assert manager.connections["demo"]._client.session.protocol_version == "2026-07-28"
    asked: list[ElicitationRequest] = []
    manager.set_elicitor(lambda request: (asked.append(request), ElicitationAnswer("accept", {"colour": "teal"}))[1])
    assert tools["demo__ask_colour"]() == "accept: teal"
    (request,) = asked
    assert (request.server, request.message, request.required) == ("demo", "Which colour?", ("colour",))
    manager.set_elicitor(None)
    assert tools["demo__ask_colour"]() == "decline"  # nobody to ask: declined at once
