"""ReplayingProvider in a real harness turn: replayed calls, the switch to live, strict mode."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_brain import AgentHarness, AgentToolRegistry, EventLog, ScriptedProvider
from jupyter_brain.agent.tools import tool
from jupyter_brain.providers.replay import ReplayingProvider, TurnRecording

STATE = {"value": 1}


@tool
def peek() -> str:
    """The value the agent looks at."""
    return f"value={STATE['value']}"


class MustNotBeCalled:
    """A provider that fails the test when it is called."""

    name, model = "forbidden", "none"

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        pytest.fail("the live provider was called")

    generate_stream = generate


def run(provider: ReplayingProvider, log: EventLog | None = None) -> tuple[Any, list[Any]]:
    harness = AgentHarness(provider, AgentToolRegistry([peek]), log or EventLog(":memory:"), stream=True,
                           think_level="low", reflect_every=1)
    events: list[Any] = []
    return harness.run_turn("s", [], "What is the value?", on_event=events.append), events


@pytest.fixture()
def recording() -> TurnRecording:
    STATE["value"] = 1
    bot = ScriptedProvider([{"text": "<think>peek first</think>", "tool_calls": [{"name": "peek", "arguments": {}}]},
                            "It is 1."], model="claude-sonnet-4-5")
    bot.name = "anthropic"  # a priced model: its replay must cost nothing
    log = EventLog(":memory:")
    provider = ReplayingProvider(bot, flags={"think": "low"}, cell="k")
    result, _ = run(provider, log)
    assert result.status == "completed" and result.replay == "live" and (result.cost_usd or 0) > 0
    records = log.records("recording")  # the recording integration wrote it to the event log
    assert len(records) == 1 and records[0]["cell"] == "k"
    loaded = TurnRecording.load(records[0]["recording"])
    assert loaded is not None and [c.kind for c in loaded.calls] == ["step", "reflection", "step", "reflection"]
    return loaded


def test_a_matching_recording_answers_every_call_for_free(recording):
    result, events = run(ReplayingProvider(MustNotBeCalled(), [recording], flags={"think": "low"}))
    assert result.status == "completed" and result.text == "It is 1." and result.replay == "replayed"
    assert result.cost_usd == 0.0 and result.input_tokens == 0
    assert result.tool_calls[0].name == "peek" and result.tool_calls[0].status == "ok"  # the tool ran
    assert events[0].provider == "replayed"  # the header says so
    assert "peek first" in result.steps[0].thinking


def test_a_full_replay_keeps_the_recorded_provider_and_model(recording):
    """The recording saved again names who answered: a turn replayed to the end was not
    answered by today's live provider (a new key must not relabel an old answer)."""
    provider = ReplayingProvider(MustNotBeCalled(), [recording], flags={"think": "low"})
    run(provider)
    again = provider.recording()
    assert (again.provider, again.model) == ("anthropic", "claude-sonnet-4-5")
    assert [c.fp for c in again.calls] == [c.fp for c in recording.calls]


def test_no_live_provider_is_needed_for_a_full_replay(recording):
    result, _ = run(ReplayingProvider(None, [recording], flags={"think": "low"}, unavailable="no Anthropic API key"))
    assert result.status == "completed" and result.replay == "replayed"


def test_a_changed_tool_result_goes_live_from_that_step(recording):
    STATE["value"] = 2
    live = ScriptedProvider(["It is 2."], reflections=["Fine. Confidence: 0.9"])
    result, events = run(ReplayingProvider(live, [recording], flags={"think": "low"}))
    assert result.text == "It is 2." and result.replay == "partly replayed"
    assert len(live.calls) == 3  # the reflection after the tool, step 2 and its reflection
    switch = [e for e in events if e.type == "provider_fallback"]
    assert len(switch) == 1 and "a tool result of step 1 changed" in switch[0].message


def test_strict_stops_with_what_changed_and_calls_nothing(recording):
    STATE["value"] = 2
    result, _ = run(ReplayingProvider(MustNotBeCalled(), [recording], mode="strict", flags={"think": "low"}))
    assert result.status == "error" and result.replay == "stopped"
    assert result.error == ("--replay strict: the recording of this cell no longer matches at a reflection call "
                            "(step 1): a tool result of step 1 changed (the reflection reads it); run it with --replay auto to go on "
                            "live from there, or --rerun")
    assert result.messages[-1]["role"] == "assistant"  # the history stays valid


def test_strict_without_a_recording_calls_nothing(recording):
    result, _ = run(ReplayingProvider(MustNotBeCalled(), [], mode="strict", flags={"think": "low"}))
    assert result.status == "error" and "this cell has no recording" in (result.error or "")


def test_going_live_without_a_live_provider_says_why(recording):
    STATE["value"] = 2
    result, _ = run(ReplayingProvider(None, [recording], flags={"think": "low"}, unavailable="no Anthropic API key"))
    assert result.status == "error"
    assert result.error is not None and result.error.endswith("(the reflection reads it), and no live model can answer: no Anthropic API key")


def test_off_and_other_flags_go_live(recording):
    live = ScriptedProvider([{"text": "", "tool_calls": [{"name": "peek", "arguments": {}}]}, "It is 1."])
    result, _ = run(ReplayingProvider(live, [recording], mode="off", flags={"think": "low"}))
    assert result.replay == "live" and len(live.calls) == 4
    live = ScriptedProvider([{"text": "", "tool_calls": [{"name": "peek", "arguments": {}}]}, "It is 1."])
    result, _ = run(ReplayingProvider(live, [recording], flags={"think": "high"}))
    assert result.replay == "live" and len(live.calls) == 4  # the first request differs already


def test_only_tool_calls_that_ran_when_recorded_count_as_allowed():
    @tool(effect="execute")
    def poke() -> str:
        """Change something."""
        return "poked"

    def turn(provider: ReplayingProvider, approve: bool) -> Any:
        registry = AgentToolRegistry([poke], permission_mode="ask")
        harness = AgentHarness(provider, registry, EventLog(":memory:"), approver=lambda *a: approve)
        return harness.run_turn("s", [], "Poke it.")

    script = [{"text": "", "tool_calls": [{"name": "poke", "arguments": {}}]}, "Done."]
    denied = ReplayingProvider(ScriptedProvider(script), cell="k")
    assert turn(denied, False).tool_calls[0].status == "denied"
    allowed = ReplayingProvider(ScriptedProvider(script), cell="k")
    assert turn(allowed, True).tool_calls[0].status == "ok"
    assert denied.recording().ran == [] and allowed.recording().ran == ["call_1"]

    replay = ReplayingProvider(MustNotBeCalled(), [allowed.recording()])
    asked: list[str] = []
    harness = AgentHarness(replay, AgentToolRegistry([poke], permission_mode="ask"), EventLog(":memory:"),
                           approver=lambda call, *a: asked.append(call.id) or replay.ran_when_recorded(call.id))
    assert harness.run_turn("s", [], "Poke it.").replay == "replayed"
    assert asked == ["call_1"]
    assert not ReplayingProvider(MustNotBeCalled(), [denied.recording()]).ran_when_recorded("call_1")
