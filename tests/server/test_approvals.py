"""``ask`` (issue #35): the approvals queue on its own, then on a real Jupyter server whose
"browser" is this test polling the lab extension's routes, while the MCP SDK's client calls:
approve runs the call, deny returns the denial to the agent, an unanswered card times out,
no browser refuses at once, and the routes need the server's token."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import httpx
import nbformat
import pytest

from jupyter_brain.server import approvals as approvals_module
from jupyter_brain.server.approvals import ApprovalRequest, Approvals
from jupyter_brain.server.gate import Gate, OutsideSession, Refused

from .jupyter import RunningServer, _reply, saved_notebook, start_server, write_notebook


def _request(path: str = "nb.ipynb", tool: str = "insert_cell") -> ApprovalRequest:
    return ApprovalRequest("claude-code", "s1", tool, "write", path, "insert a code cell at index 1",
                           diff="--- a\n+++ b\n+x = 1\n")


# the queue ---------------------------------------------------------------------------------
def test_a_request_waits_for_the_browser_that_shows_its_notebook_and_its_decision() -> None:
    async def scenario() -> tuple[Any, ...]:
        queue = Approvals(timeout_s=30)
        assert not queue.attached()
        first = await queue.poll("tab", ["nb.ipynb"], [])  # a new browser is answered at once
        assert first == [] and queue.attached()
        asking = asyncio.ensure_future(queue.ask(_request()))
        shown = await queue.poll("tab", ["nb.ipynb"], [])
        other = await queue.poll("elsewhere", ["other.ipynb"], [])  # open in a tab elsewhere: not here
        assert queue.decide(shown[0]["id"], True, "alice")
        assert not queue.decide(shown[0]["id"], False, "bob")  # the first decision wins
        answer = await asking
        after = await queue.poll("tab", ["nb.ipynb"], [shown[0]["id"]])  # its card goes
        return shown, other, answer, after

    shown, other, answer, after = asyncio.run(scenario())
    assert [(r["tool"], r["where"], r["client"], r["diff"]) for r in shown] == [
        ("insert_cell", "notebook", "claude-code", "--- a\n+++ b\n+x = 1\n")]
    assert 0 < shown[0]["timeout_s"] <= 30
    assert other == []
    assert answer.approved and answer.by == "alice"
    assert after == []


def test_a_notebook_no_tab_shows_is_asked_in_a_dialog_and_denial_and_timeout_refuse() -> None:
    async def scenario() -> tuple[Any, ...]:
        queue = Approvals(timeout_s=30)
        await queue.poll("tab", [], [])
        asking = asyncio.ensure_future(queue.ask(_request("new.ipynb", "create_notebook")))
        shown = await queue.poll("tab", [], [])
        queue.decide(shown[0]["id"], False, "alice")
        denied = await asking
        queue.timeout_s = 0.05
        timed_out = await queue.ask(_request())
        return shown, denied, timed_out

    shown, denied, timed_out = asyncio.run(scenario())
    assert shown[0]["where"] == "dialog"
    assert not denied.approved and denied.by == "alice"
    assert not timed_out.approved and timed_out.by == "timeout"


def test_a_browser_that_stopped_polling_is_no_longer_attached(monkeypatch) -> None:
    monkeypatch.setattr(approvals_module, "ATTACHED_GRACE_S", 0.0)

    async def scenario() -> tuple[bool, bool]:
        queue = Approvals(timeout_s=30)
        queue.poll_s = 0.05
        await queue.poll("tab", ["nb.ipynb"], [])  # a new browser: answered at once
        polling = asyncio.ensure_future(queue.poll("tab", ["nb.ipynb"], []))  # waits: nothing new
        await asyncio.sleep(0)
        during = queue.attached()
        await polling
        return during, queue.attached()

    assert asyncio.run(scenario()) == (True, False)


def test_the_gate_refuses_at_once_without_a_browser_and_says_who_denied() -> None:
    session = OutsideSession("s1", "claude-code")
    gate = Gate("ask", 10, approvals=Approvals(timeout_s=30))
    with pytest.raises(Refused) as no_browser:
        gate.check(session, "insert_cell", "write")
    assert "no JupyterLab" in str(no_browser.value) and "--JupyterBrainMCP.permission=auto" in str(no_browser.value)

    async def denied() -> str:
        await gate.approvals.poll("tab", ["nb.ipynb"], [])
        assert gate.check(session, "execute_code", "execute").how == "ask"
        asking = asyncio.ensure_future(gate.ask(session, _request(tool="execute_code")))
        shown = await gate.approvals.poll("tab", ["nb.ipynb"], [])
        gate.approvals.decide(shown[0]["id"], False, "alice")
        with pytest.raises(Refused) as refused:
            await asking
        assert refused.value.decision.as_dict() == {"allowed": False, "how": "denied", "denied": True,
                                                    "denied_by": "alice"}
        return str(refused.value)

    message = asyncio.run(denied())
    assert message.startswith("execute_code denied: the user (alice) denied this call")
    assert session.executions == 0


# on a real server --------------------------------------------------------------------------
pytest_server = pytest.mark.kernel


@pytest.fixture(scope="module")
def ask_server(tmp_path_factory: pytest.TempPathFactory) -> RunningServer:
    root = tmp_path_factory.mktemp("ask") / "root"
    root.mkdir()
    write_notebook(root / "nb.ipynb", ["x = 1"])
    server = start_server(root, "--JupyterBrainMCP.permission=ask", "--JupyterBrainMCP.approval_timeout=3")
    yield server
    server.stop()


@pytest_server
def test_the_approval_routes_need_the_servers_token(ask_server: RunningServer) -> None:
    route = ask_server.url + "jupyter-brain/approvals"
    assert httpx.post(route, json={"browser": "b", "notebooks": []}).status_code == 403
    assert httpx.post(route + "/1-abc", json={"approved": True}).status_code == 403
    wrong = {"Authorization": "token not-the-token"}
    assert httpx.post(route, json={"browser": "b"}, headers=wrong).status_code == 403
    right = {"Authorization": f"token {ask_server.token}"}
    assert httpx.post(route + "/1-abc", json={"approved": True}, headers=right).status_code == 404  # not waiting
    assert httpx.post(route, json={"notebooks": "x"}, headers=right).status_code == 400


@pytest_server
def test_approve_runs_the_call_deny_and_silence_refuse_it(ask_server: RunningServer) -> None:
    no_browser = _calls(ask_server, [("insert_cell", {"path": "nb.ipynb", "source": "refused = 1"}, None)])
    decisions = _calls(ask_server, [
        ("insert_cell", {"path": "nb.ipynb", "source": "y = 2"}, True),
        ("edit_cell", {"path": "nb.ipynb", "index": 0, "source": "x = 99"}, False),
        ("execute_code", {"path": "nb.ipynb", "code": "open('ran.txt', 'w')"}, "silence"),
    ], browser=True)
    (refused,), ((inserted, card1), (denied, card2), (timed_out, card3)) = no_browser, decisions
    assert refused[0].is_error and "no JupyterLab" in refused[0].text and "permission=auto" in refused[0].text
    assert not inserted.is_error and "Inserted a code cell at index 1" in inserted.text
    assert card1["client"] == "approval-test" and card1["title"] == "insert a code cell at index 1"
    assert "+y = 2" in card1["diff"] and card1["where"] == "notebook"
    assert denied.is_error and denied.text.startswith("edit_cell denied: the user (")
    assert "-x = 1" in card2["diff"] and "+x = 99" in card2["diff"]
    assert timed_out.is_error and "within 3 s (JupyterBrainMCP.approval_timeout)" in timed_out.text
    assert card3["code"] == "open('ran.txt', 'w')" and card3["tool"] == "execute_code"

    nb = saved_notebook(ask_server.root / "nb.ipynb", lambda nb: len(nb.cells) == 2)
    assert [c.source for c in nb.cells] == ["x = 1", "y = 2"]
    assert nb.cells[1].metadata["jupyter_brain"]["provenance"]["client"] == "approval-test"
    assert not (ask_server.root / "ran.txt").exists()

    from jupyter_brain.agent.events import EventLog

    log = EventLog(ask_server.root / ".jupyter_brain" / "events.sqlite")
    try:
        records = [r["decision"] for r in log.records("outside_call")]
    finally:
        log.close()
    assert [d["how"] for d in records] == ["refused: ask", "approved", "denied", "refused: timeout"]
    assert records[1]["approved_by"] and records[2]["denied"] is True and records[2]["denied_by"]
    assert nbformat.validate(nb) is None


def _calls(server: RunningServer, calls: list[tuple[str, dict[str, Any], Any]], *, browser: bool = False
           ) -> list[Any]:
    """Each call in one MCP session; with ``browser``, a page polling for nb.ipynb answers each
    card with its ``True`` (approve), ``False`` (deny) or ``"silence"`` (no answer)."""
    return anyio.run(_run_calls, server, calls, browser)


async def _run_calls(server: RunningServer, calls: list[tuple[str, dict[str, Any], Any]], browser: bool) -> list[Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import Implementation

    headers = {"Authorization": f"token {server.token}"}
    route = server.url + "jupyter-brain/approvals"
    results: list[Any] = []
    async with httpx.AsyncClient(headers=headers, timeout=60) as page, \
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        if browser:
            assert (await page.post(route, json={"browser": "page-1", "notebooks": ["nb.ipynb"]})).status_code == 200
        async with Client(streamable_http_client(server.endpoint, http_client=http),
                          client_info=Implementation(name="approval-test", version="1")) as client:
            for name, args, answer in calls:
                if not browser:
                    results.append([_reply(await client.call_tool(name, args))])
                    continue
                async with anyio.create_task_group() as group:
                    card: dict[str, Any] = {}

                    async def answer_card(answer: Any = answer, card: dict[str, Any] = card) -> None:
                        while not card:  # the long poll returns once the call's card is waiting
                            polled = await page.post(route, json={"browser": "page-1", "notebooks": ["nb.ipynb"]})
                            card.update(next(iter(polled.json()["requests"]), {}))
                        if answer != "silence":
                            decided = await page.post(f"{route}/{card['id']}", json={"approved": answer})
                            assert decided.status_code == 204

                    group.start_soon(answer_card)
                    reply = _reply(await client.call_tool(name, args))
                results.append((reply, card))
    return results
