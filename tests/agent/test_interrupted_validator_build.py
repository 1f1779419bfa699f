"""Ctrl-C while pydantic builds a validator is reported as Ctrl-C (foundation/interrupts.py).

Our models build their validators on first use (#40), so a kernel's first turn builds them
while it streams. A Ctrl-C that lands inside that build comes out of pydantic-core as a
``SchemaError`` ("Error building ... validator: KeyboardInterrupt: "); seen in CI, where the
interrupted first turn failed with "the turn stopped (error): SchemaError ..." instead of
"(interrupted)". These tests raise the exception pydantic-core really raises.
"""

from __future__ import annotations

import pytest
from pydantic_core import SchemaError, SchemaValidator, core_schema

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.foundation.interrupts import is_interrupt
from jupyter_brain.providers.base import ProviderResult, StreamEvent, ToolCall
from jupyter_brain.providers.scripted import ScriptedProvider


class _PressesCtrlC:
    """A literal value pydantic-core calls back into while it builds the validator."""

    def __repr__(self) -> str:
        raise KeyboardInterrupt


def interrupted_build() -> SchemaError:
    """The error pydantic-core raises when Ctrl-C lands in a validator's build."""
    with pytest.raises(SchemaError) as caught:
        SchemaValidator(core_schema.literal_schema([_PressesCtrlC()]))
    return caught.value


def other_schema_error() -> SchemaError:
    with pytest.raises(SchemaError) as caught:
        SchemaValidator({"type": "no-such-type"})  # type: ignore[arg-type]
    return caught.value


def test_an_interrupted_build_is_told_from_other_errors() -> None:
    assert "KeyboardInterrupt" in str(interrupted_build())
    assert is_interrupt(interrupted_build()) and is_interrupt(KeyboardInterrupt())
    assert not is_interrupt(other_schema_error()) and not is_interrupt(ValueError("KeyboardInterrupt"))


class _Streams:
    """Streams some text, then Ctrl-C lands while the next event's validator is built."""

    name = model = "fake"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def generate(self, messages, tools, **kw):
        raise self.error  # outside the stream's own handler: the turn's handler sees it

    def generate_stream(self, messages, tools, **kw):
        yield StreamEvent(type="text", text="partial ")
        yield StreamEvent(type="text", text="answer")
        raise self.error


def run(provider, stream: bool):
    log = EventLog(":memory:")
    result = AgentHarness(provider, AgentToolRegistry(), log, stream=stream).run_turn("s", [], "q")
    return result, [e for e in log.events(turn_id=result.turn_id) if e.type == "error"]


def test_mid_stream_the_turn_is_interrupted_and_keeps_what_the_user_saw() -> None:
    result, errors = run(_Streams(interrupted_build()), stream=True)
    assert result.status == "interrupted" and not errors and not result.error
    assert result.messages[-1]["role"] == "assistant"
    assert result.messages[-1]["content"].startswith("partial answer")


def test_outside_the_stream_the_turn_is_interrupted_and_the_session_goes_on() -> None:
    result, errors = run(_Streams(interrupted_build()), stream=False)
    assert result.status == "interrupted" and not errors and not result.error
    log = EventLog(":memory:")
    harness = AgentHarness(ScriptedProvider(["again"]), AgentToolRegistry(), log)
    assert harness.run_turn("s", result.messages, "q2").status == "completed"


def test_any_other_schema_error_is_still_an_error() -> None:
    result, errors = run(_Streams(other_schema_error()), stream=False)
    assert result.status == "error" and errors and "SchemaError" in result.error


def test_during_tools_every_call_is_answered_as_interrupted() -> None:
    @tool
    def lookup(key: str) -> str:
        """Looks a key up."""
        return key

    registry = AgentToolRegistry()
    registry.register(lookup)
    provider = ScriptedProvider([ProviderResult(text="", tool_calls=[ToolCall(id="c1", name="lookup", arguments={"key": "a"})]),
                                 "never"])
    log = EventLog(":memory:")
    harness = AgentHarness(provider, registry, log)

    def build_interrupted(*a, **k):
        raise interrupted_build()

    harness._executor.execute = build_interrupted
    result = harness.run_turn("s", [], "q")
    assert result.status == "interrupted" and not result.error
    ends = [e for e in log.events(turn_id=result.turn_id) if e.type == "tool_call_end"]
    assert [e.status for e in ends] == ["interrupted"]


def test_a_model_whose_build_was_interrupted_builds_at_its_next_use() -> None:
    """What ``is_interrupt`` relies on: the interrupted class is not left broken."""
    from typing import Annotated, Any

    from pydantic import BaseModel, ConfigDict

    pressed: list[bool] = []

    class OnceThenFine:
        def __repr__(self) -> str:
            if not pressed:
                pressed.append(True)
                raise KeyboardInterrupt
            return "OnceThenFine()"

        def __hash__(self) -> int:
            return 1

        def __eq__(self, other: object) -> bool:
            return isinstance(other, OnceThenFine)

    value = OnceThenFine()

    class LiteralOfIt:
        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
            return core_schema.literal_schema([value])

    class Deferred(BaseModel):
        model_config = ConfigDict(defer_build=True)
        x: Annotated[Any, LiteralOfIt] = None

    with pytest.raises(SchemaError) as first:
        Deferred(x=value)
    assert is_interrupt(first.value)
    assert Deferred(x=value).x is value
