"""``StopTurn``: the one way a hook ends a turn (agent/hooks.py), checked on its own.

Raised at a point that may stop the turn, it ends the turn with its status and message:
the call it stopped is not made, every tool call is answered, the history is valid for
the next call and the event log keeps the ending. Raised anywhere else it is a failure
like any other hook's: one recoverable error, and the turn goes on.
"""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_brain.agent.events import ErrorEvent, EventLog, TurnEnd
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.history import history_problems
from jupyter_brain.agent.hooks import Answer, ModelRequest, StopTurn, TurnContext, TurnHook
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.scripted import ScriptedProvider


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def _call(name: str, **arguments: object) -> dict:
    return {"text": "", "tool_calls": [{"name": name, "arguments": arguments}]}


class StopAtStep(TurnHook):
    """Stops the turn before the model call of step ``at`` (of a given purpose)."""

    name = "stopper"

    def __init__(self, at: int = 1, purpose: str = "step") -> None:
        self.at = at
        self.purpose = purpose
        self.seen: list[tuple[int, str]] = []

    def before_model_call(self, ctx: TurnContext, request: ModelRequest) -> ModelRequest:
        self.seen.append((request.step, request.purpose))
        if request.purpose == self.purpose and request.step >= self.at:
            raise StopTurn("budget", f"stopped at step {request.step} by the test")
        return request


def test_stop_turn_before_the_first_call_ends_the_turn_and_the_call_is_not_made() -> None:
    bot = ScriptedProvider(["never sent"])
    log = EventLog(":memory:")
    harness = AgentHarness(bot, AgentToolRegistry([lookup]), log, hooks=[StopAtStep(1)])
    result = harness.run_turn("s", [], "hi")
    assert bot.calls == []
    assert result.status == "budget"
    assert result.text == "[stopped at step 1 by the test]"
    assert result.messages[-1] == {"role": "assistant", "content": "[stopped at step 1 by the test]"}
    assert history_problems(result.messages, require_final_assistant=True) == []
    (end,) = [e for e in log.events(turn_id=result.turn_id) if isinstance(e, TurnEnd)]
    assert end.status == "budget" and end.text == result.text
    assert not [e for e in log.events(turn_id=result.turn_id) if isinstance(e, ErrorEvent)]


def test_stop_turn_after_a_tool_cycle_leaves_every_call_answered_and_the_next_turn_runs() -> None:
    bot = ScriptedProvider([_call("lookup", key="a"), "not sent", "the next turn's answer"])
    hook = StopAtStep(2)
    harness = AgentHarness(bot, AgentToolRegistry([lookup]), None, hooks=[hook])
    result = harness.run_turn("s", [], "look a up")
    assert result.status == "budget" and len(bot.calls) == 1
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert history_problems(result.messages, require_final_assistant=True) == []
    hook.at = 99  # the next turn goes on from that history
    again = harness.run_turn("s", result.messages, "and now?")
    assert again.status == "completed" and again.text == "not sent"
    assert bot.calls[-1]["messages"][-1]["content"] == "and now?"


def test_stop_turn_from_a_side_call_inside_a_library_ends_the_turn() -> None:
    """A reflection is made inside ReflectionEngine (which isolates its own failures): the
    turn's hooks still see it first, and a StopTurn there still ends the turn."""
    bot = ScriptedProvider([_call("lookup", key="a"), "answer"])
    hook = StopAtStep(1, purpose="reflection")
    harness = AgentHarness(bot, AgentToolRegistry([lookup]), None, hooks=[hook], think_level="low", reflect_every=1)
    result = harness.run_turn("s", [], "look a up")
    assert (1, "reflection") in hook.seen
    assert result.status == "budget" and result.reflections == []
    assert all(m["messages"][0].get("kind") != "reflection" for m in bot.calls)  # never sent
    assert history_problems(result.messages, require_final_assistant=True) == []


class StopWhenFinishing(TurnHook):
    name = "late"

    def finish_answer(self, ctx: TurnContext, answer: Answer) -> Answer:
        raise StopTurn("budget", "too late to stop")


def test_stop_turn_where_the_turn_cannot_stop_is_an_isolated_failure() -> None:
    events: list = []
    harness = AgentHarness(ScriptedProvider(["fine"]), AgentToolRegistry(), None, hooks=[StopWhenFinishing()])
    result = harness.run_turn("s", [], "hi", on_event=events.append)
    assert result.status == "completed" and result.text == "fine"
    (error,) = [e for e in events if isinstance(e, ErrorEvent)]
    assert error.kind == "late" and error.recoverable and "too late to stop" in error.message


class StopOnEveryEvent(TurnHook):
    name = "noisy"

    def on_event(self, ctx: TurnContext, event: object) -> None:
        raise StopTurn("budget", "an event cannot stop a turn")


def test_stop_turn_from_on_event_is_reported_once_and_the_turn_goes_on() -> None:
    events: list = []
    harness = AgentHarness(ScriptedProvider(["fine"]), AgentToolRegistry(), None, hooks=[StopOnEveryEvent()])
    result = harness.run_turn("s", [], "hi", on_event=events.append)
    assert result.status == "completed"
    assert len([e for e in events if isinstance(e, ErrorEvent) and e.kind == "noisy"]) == 1


@pytest.mark.parametrize("status", ["completed", "refused", "over"])
def test_stop_turn_needs_a_status_that_is_not_an_answer(status: str) -> None:
    with pytest.raises(ValueError, match="turn status"):
        StopTurn(status, "why")


def test_ctx_spent_counts_every_call_of_the_turn_side_calls_included() -> None:
    seen: list = []

    class Watch(TurnHook):
        def before_model_call(self, ctx: TurnContext, request: ModelRequest) -> ModelRequest:
            seen.append((request.purpose, ctx.spent()))
            return request

    usage = {"input_tokens": 100, "output_tokens": 10}
    bot = ScriptedProvider([{**_call("lookup", key="a"), "usage": usage}, {"text": "done", "usage": usage}],
                           reflections=[{"text": "ok. Confidence: 0.9", "usage": {"input_tokens": 7, "output_tokens": 3}}])
    harness = AgentHarness(bot, AgentToolRegistry([lookup]), None, hooks=[Watch()], think_level="low", reflect_every=1)
    harness.run_turn("s", [], "look a up")
    assert [(p, s.tokens) for p, s in seen] == [("step", 0), ("reflection", 110), ("step", 120), ("reflection", 230)]


class StopAtStart(TurnHook):
    def turn_start(self, ctx: TurnContext) -> None:
        raise StopTurn("error", "this notebook is closed for the day")


class StopAfterTheCall(TurnHook):
    def after_model_call(self, ctx: TurnContext, step: int, result: Any) -> Any:
        if result.tool_calls:
            raise StopTurn("budget", "the answer asked for a tool the budget cannot afford")
        return result


def test_stop_turn_at_turn_start_makes_no_call() -> None:
    bot = ScriptedProvider(["never sent"])
    result = AgentHarness(bot, AgentToolRegistry(), None, hooks=[StopAtStart()]).run_turn("s", [], "hi")
    assert (result.status, result.text, bot.calls) == ("error", "[this notebook is closed for the day]", [])
    assert history_problems(result.messages, require_final_assistant=True) == []


def test_stop_turn_after_a_call_drops_its_tool_calls_and_the_history_stays_valid() -> None:
    bot = ScriptedProvider([_call("lookup", key="a"), "never sent"])
    harness = AgentHarness(bot, AgentToolRegistry([lookup]), None, hooks=[StopAfterTheCall()])
    result = harness.run_turn("s", [], "look a up")
    assert result.status == "budget" and len(bot.calls) == 1 and result.tool_calls == []
    assert result.input_tokens > 0 and result.output_tokens > 0  # the call was made: it is counted
    assert [m["role"] for m in result.messages] == ["user", "assistant"]
    assert history_problems(result.messages, require_final_assistant=True) == []
