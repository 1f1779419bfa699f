"""User hooks (agent/hooks.py): what a hook may do to a turn, and that a failing one cannot end it."""

from __future__ import annotations

import dataclasses

import pytest

from jupyter_brain.agent.context.layers import ContextLayer
from jupyter_brain.agent.events import ErrorEvent, ToolCallEnd, TurnEnd
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.hooks import Answer, HistoryView, ModelRequest, ToolOffer, TurnContext, TurnHook
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.scripted import ScriptedProvider


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool(effect="execute")
def run_code(code: str) -> str:
    """Pretend to execute code."""
    return "ran"


def _call(name: str, **arguments: object) -> dict:
    return {"text": "", "tool_calls": [{"name": name, "arguments": arguments}]}


def _harness(script: list, hooks: list, **kwargs: object) -> tuple[AgentHarness, ScriptedProvider]:
    bot = ScriptedProvider(script)
    return AgentHarness(bot, AgentToolRegistry([lookup, run_code]), None, hooks=hooks, **kwargs), bot


class BlockRunCode(TurnHook):
    def prepare_tools(self, ctx: TurnContext, offer: ToolOffer) -> ToolOffer:
        offer.blocked["run_code"] = "blocked by the user's hook"
        return offer


def test_a_hook_blocks_a_tool_it_is_neither_offered_nor_run() -> None:
    events: list = []
    harness, bot = _harness([_call("run_code", code="rm -rf /"), "ok"], [BlockRunCode()])
    result = harness.run_turn("s", [], "clean up", on_event=events.append)
    assert [t["name"] for t in bot.calls[0]["tools"]] == ["lookup", "read_artifact"]
    (end,) = [e for e in events if isinstance(e, ToolCallEnd)]
    assert end.status == "blocked" and result.tool_calls[0].status == "blocked"
    assert "blocked by the user's hook" in result.messages[2]["content"]
    assert result.status == "completed" and result.text == "ok"


class StyleGuide(TurnHook):
    def context_layers(self, ctx: TurnContext) -> list[ContextLayer]:
        return [ContextLayer.fixed("hook", f"Answer {ctx.user_message!r} in French.")]


def test_a_hook_adds_a_context_layer_to_each_request_not_to_the_history() -> None:
    harness, bot = _harness([_call("lookup", key="a"), "bonjour"], [StyleGuide()])
    result = harness.run_turn("s", [], "hello")
    for request in bot.calls:
        (layer,) = [m for m in request["messages"] if m.get("kind") == "hook"]
        assert layer["content"] == "Answer 'hello' in French."
    assert not any(m.get("kind") == "hook" for m in result.messages)


class ToolLog(TurnHook):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def on_event(self, ctx: TurnContext, event: object) -> None:
        if isinstance(event, ToolCallEnd):
            self.lines.append(f"{ctx.turn_id} {event.name} {event.status}")


def test_a_hook_logs_every_tool_call_of_every_turn() -> None:
    log = ToolLog()
    harness, _ = _harness([_call("lookup", key="a"), _call("lookup", key="b"), "done", _call("lookup", key="c"),
                           "again"], [log])
    first = harness.run_turn("s", [], "q1", turn_id="t1")
    harness.run_turn("s", first.messages, "q2", turn_id="t2")
    assert log.lines == ["t1 lookup ok", "t1 lookup ok", "t2 lookup ok"]


class NoGuesses(TurnHook):
    def finish_answer(self, ctx: TurnContext, answer: Answer) -> Answer:
        if "probably" in answer.text:
            return dataclasses.replace(answer, text="[answer withheld: it was a guess]")
        return answer


def test_a_hook_vetoes_an_answer_before_turn_end() -> None:
    events: list = []
    harness, _ = _harness(["It is probably 42."], [NoGuesses()])
    result = harness.run_turn("s", [], "how many?", on_event=events.append)
    assert result.text == "[answer withheld: it was a guess]"
    assert events[-1].text == result.text and isinstance(events[-1], TurnEnd)
    assert result.messages[-1]["content"] == "It is probably 42."  # the history keeps what the model said


class Broken(TurnHook):
    name = "broken_hook"

    def on_event(self, ctx: TurnContext, event: object) -> None:
        raise RuntimeError("hook bug")

    def context_layers(self, ctx: TurnContext) -> list[ContextLayer]:
        raise ValueError("layer bug")


def test_a_failing_hook_is_one_recoverable_error_per_point_and_the_turn_goes_on() -> None:
    events: list = []
    log = ToolLog()
    harness, _ = _harness([_call("lookup", key="a"), "fine"], [Broken(), log])
    result = harness.run_turn("s", [], "q", on_event=events.append)
    assert result.status == "completed" and result.text == "fine"
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [(e.kind, e.recoverable) for e in errors] == [("broken_hook", True), ("broken_hook", True)]
    assert "hook bug" in errors[0].message and "layer bug" in errors[1].message
    assert log.lines == [f"{result.turn_id} lookup ok"]  # the other hook still saw every event


class PerTurn:
    """An Integration: a new hook each turn, none when the turn does not want it."""

    def __init__(self) -> None:
        self.built: list[str] = []

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        if "skip" in ctx.user_message:
            return None
        self.built.append(ctx.turn_id)
        return StyleGuide()


def test_an_integration_builds_a_hook_per_turn_or_none() -> None:
    integration = PerTurn()
    harness, bot = _harness(["a", "b"], [integration])
    harness.run_turn("s", [], "first", turn_id="t1")
    harness.run_turn("s", [], "skip this one", turn_id="t2")
    assert integration.built == ["t1"]
    assert any(m.get("kind") == "hook" for m in bot.calls[0]["messages"])
    assert not any(m.get("kind") == "hook" for m in bot.calls[1]["messages"])


def test_not_a_hook_is_refused_when_the_harness_is_built() -> None:
    with pytest.raises(TypeError, match="TurnHook or an Integration"):
        AgentHarness(ScriptedProvider(["x"]), None, None, hooks=[object()])  # type: ignore[list-item]


class Everything(TurnHook):
    """Each remaining point: the request, the history, the result, the fields, the end."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def turn_start(self, ctx: TurnContext) -> None:
        self.seen.append("turn_start")

    def process_history(self, ctx: TurnContext, history: HistoryView) -> list[dict] | None:
        self.seen.append(f"history {history.step}")
        if history.step == 2:  # drop the tool round trip, keep the prompt
            return [history.messages[history.prompt_index]]
        return None

    def before_model_call(self, ctx: TurnContext, request: ModelRequest) -> ModelRequest:
        self.seen.append(f"model {request.step}")
        return dataclasses.replace(request, tool_schemas=[t for t in request.tool_schemas if t["name"] == "lookup"])

    def after_model_call(self, ctx: TurnContext, step: int, result: object) -> object:
        self.seen.append(f"answered {step}")
        return result

    def result_fields(self, ctx: TurnContext) -> dict:
        return {"memories": [{"id": "m1", "text": "from a hook"}]}

    def after_turn(self, ctx: TurnContext, result: object) -> None:
        self.seen.append(f"after {getattr(result, 'status', '?')} {ctx.tools_offered}")


def test_every_point_in_order_with_the_values_a_hook_returns() -> None:
    hook = Everything()
    harness, bot = _harness([_call("lookup", key="a"), "done"], [hook])
    result = harness.run_turn("s", [], "q")
    assert hook.seen == ["turn_start", "history 1", "model 1", "answered 1", "history 2", "model 2", "answered 2",
                         "after completed ['lookup', 'run_code', 'read_artifact']"]
    assert [t["name"] for t in bot.calls[0]["tools"]] == ["lookup"]
    assert [m["role"] for m in bot.calls[1]["messages"] if m["role"] != "system"] == ["user"]
    assert result.memories == [{"id": "m1", "text": "from a hook"}]


def test_a_turn_without_hooks_has_no_per_event_observer(monkeypatch: pytest.MonkeyPatch) -> None:
    from jupyter_brain.agent.loop import turn as turn_module

    made: list = []
    real_init = turn_module.Turn.__init__

    def spy(self: turn_module.Turn, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]
        made.append(self)

    monkeypatch.setattr(turn_module.Turn, "__init__", spy)
    _harness(["hi"], [])[0].run_turn("s", [], "q")
    _harness(["hi"], [StyleGuide()])[0].run_turn("s", [], "q")  # no on_event of its own
    _harness(["hi"], [ToolLog()])[0].run_turn("s", [], "q")
    assert [t.emit.observers == () for t in made] == [True, True, False]
