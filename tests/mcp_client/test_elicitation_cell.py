"""A ``%%agent`` turn whose MCP tool asks the user (server-everything 2026.8.31's
``trigger-elicitation-request``), in an in-process IPython with a scripted model: the card
in a widget view, its answer reaching the server, the answer kept in the turn's recording
and replayed without asking; declined at once headless or where no form can be shown. And a
tool that runs only as a task (``simulate-research-query``): its stages on its row, its
result back in the turn."""

from __future__ import annotations

import threading

import pytest

from jupyter_brain.agent.events import ApprovalDecision, ApprovalRequest, ToolProgress
from jupyter_brain.providers.scripted import ScriptedProvider

from .servers import npm_server

pytestmark = [pytest.mark.mcp_server, pytest.mark.usefixtures("shutdown_kernel_mcp")]
ELICIT = "ev__trigger-elicitation-request"


def _call(name, arguments):
    return {"text": "Asking.", "tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.fixture()
def ev(shell):
    shell.run_line_magic("agent", f"mcp add ev -- node {npm_server('mcp-server-everything')} stdio")
    return shell


class FormView:
    """A stand-in for the AgentView: records the events; answers a card as a user would."""

    def __init__(self, answer):
        self.events, self.answer, self.asked = [], answer, threading.Event()
        self._answers = {}

    def handle(self, event):
        self.events.append(event)
        if isinstance(event, ApprovalRequest) and event.effect == "elicitation":
            self._answers[event.call_id] = self.answer(event)
            self.asked.set()

    def elicitation_for(self, call_id):
        return self._answers.get(call_id)


def _with_view(monkeypatch, view):
    monkeypatch.setattr("jupyter_brain.notebook.agent_cell.agent_view", lambda shell, fold="auto": view)
    monkeypatch.setattr("jupyter_brain.notebook.agent_cell.close_view", lambda view: None)


def test_a_form_card_is_answered_and_the_answer_replays(ev, monkeypatch):
    view = FormView(lambda e: {"action": "accept", "content": {"name": "Ada", "integer": "7", "check": True}})
    _with_view(monkeypatch, view)
    # every tool offered: with selection, the tool learnt in the first run is offered in the
    # second (decisions' ToolUsageLearner), and the request is another
    ev.run_line_magic("config", "AgentMagics.max_tools = 0")
    bot = ScriptedProvider([_call(ELICIT, {}), "Thanks."])
    ev.user_ns["bot"] = bot
    ev.run_cell_magic("agent", "--provider bot --permission auto", "Sign me up.")
    (call,) = ev.user_ns["_agent"].tool_calls
    assert "- Name: Ada" in call.output and "- Favorite Integer: 7" in call.output
    request = next(e for e in view.events if isinstance(e, ApprovalRequest))
    form = request.preview["elicitation"]
    assert request.preview["parent_call_id"] == call.call_id and form["server"] == "ev"
    assert form["required"] == ["name"] and form["fields"]["integer"]["default"] == 42
    decision = next(e for e in view.events if isinstance(e, ApprovalDecision))
    assert (decision.approved, decision.action, decision.channel) == (True, "accept", "widget")
    (answer,) = _recording(view)["answers"].values()
    assert answer == {"action": "accept", "content": {"name": "Ada", "integer": 7, "check": True}}
    # Run again: the model's calls replay, and so does the answer (no card this time)
    view2 = FormView(lambda e: pytest.fail("asked again during a replay"))
    _with_view(monkeypatch, view2)
    ev.run_cell_magic("agent", "--provider bot --permission auto --replay strict", "Sign me up.")
    (again,) = ev.user_ns["_agent"].tool_calls
    assert "- Name: Ada" in again.output and not view2.asked.is_set()
    assert len(bot.calls) == 2  # the second turn was replayed, not asked of the model


def _recording(view):
    return view.output_metadata["jupyter_brain"]["recording"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_on_the_card(ev, monkeypatch, action):
    view = FormView(lambda e: {"action": action})
    _with_view(monkeypatch, view)
    ev.user_ns["bot"] = ScriptedProvider([_call(ELICIT, {}), "ok"])
    ev.run_cell_magic("agent", "--provider bot --permission auto", "Sign me up.")
    (call,) = ev.user_ns["_agent"].tool_calls
    assert ("User declined" if action == "decline" else "User cancelled") in call.output
    decision = next(e for e in view.events if isinstance(e, ApprovalDecision))
    assert (decision.approved, decision.action) == (False, action)


def test_headless_is_declined_at_once_with_a_message(ev, monkeypatch, capsys):
    monkeypatch.setattr("jupyter_brain.notebook.agent_cell.is_headless", lambda shell: True)
    ev.user_ns["bot"] = ScriptedProvider([_call(ELICIT, {}), "ok"])
    ev.run_cell_magic("agent", "--provider bot --permission auto", "Sign me up.")
    (call,) = ev.user_ns["_agent"].tool_calls
    assert "User declined" in call.output
    assert "declined: nobody can answer in a headless run (nbconvert, papermill)" in capsys.readouterr().out


def test_a_view_without_forms_declines(ev, capsys):
    ev.user_ns["bot"] = ScriptedProvider([_call(ELICIT, {}), "ok"])
    ev.run_cell_magic("agent", "--provider bot --permission auto", "Sign me up.")  # the text view
    assert "User declined" in ev.user_ns["_agent"].tool_calls[0].output
    assert "declined: this view cannot show a form" in capsys.readouterr().out


def test_a_task_only_tool_runs_in_a_turn_with_its_stages_on_its_row(ev, monkeypatch):
    view = FormView(lambda e: {"action": "cancel"})
    _with_view(monkeypatch, view)
    bot = ScriptedProvider([_call("ev__simulate-research-query", {"topic": "tides"}), "Done."])
    ev.user_ns["bot"] = bot
    ev.run_cell_magic("agent", "--provider bot --permission auto", "Research tides.")
    (call,) = ev.user_ns["_agent"].tool_calls
    assert call.status == "ok" and call.output.startswith("# Research Report: tides")
    stages = [e.message for e in view.events if isinstance(e, ToolProgress) and e.call_id == call.call_id]
    assert "Gathering sources..." in stages and "Generating report..." in stages
    assert "# Research Report: tides" in bot.calls[1]["messages"][-1]["content"]  # back into the turn
