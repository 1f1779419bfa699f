"""The runtime and skill layers: fresh system messages of every request of a turn, only
when asked for, never in the history."""

from __future__ import annotations

import datetime as dt
import functools
import platform

from jupyter_brain.agent.integrations.runtime import hook as runtime_hook
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.runtime_context import MAX_SKILL_CHARS, runtime_text, skill_text
from jupyter_brain.providers.scripted import ScriptedProvider


def _kinds(messages: list[dict]) -> dict[str, str]:
    return {m["kind"]: m["content"] for m in messages if m.get("kind")}


def test_runtime_text_names_model_date_and_python() -> None:
    text = runtime_text("anthropic", "claude-sonnet-4-5", today=lambda: dt.date(2025, 3, 14))
    assert "claude-sonnet-4-5 via anthropic" in text and "Today is 2025-03-14" in text
    assert f"Python {platform.python_version()}" in text
    assert runtime_text("", "") == ""
    assert "as ollama." in runtime_text("ollama", "")



def test_runtime_text_reads_the_clock_of_the_day_it_runs(time_machine) -> None:
    """Without ``today`` the date is the clock's (moved here), not one fixed at import."""
    time_machine.move_to(dt.datetime(2031, 2, 3, 12, 0))
    assert "Today is 2031-02-03" in runtime_text("anthropic", "m")
    time_machine.move_to(dt.datetime(2031, 2, 4, 12, 0))
    assert "Today is 2031-02-04" in runtime_text("anthropic", "m")


def test_runtime_and_skill_layers_are_in_each_request_not_in_history(monkeypatch) -> None:
    # A fixed date: the turn and the expectation could otherwise fall on either side of midnight.
    monkeypatch.setattr(runtime_hook, "runtime_text",
                        functools.partial(runtime_text, today=lambda: dt.date(2025, 3, 14)))
    bot = ScriptedProvider([{"text": "", "tool_calls": [{"name": "read_artifact", "arguments": {"artifact_id": "x"}}]},
                            "done"])
    harness = AgentHarness(bot, None, None)
    result = harness.run_turn("s", [], "hi", runtime_provider="scripted", runtime_model="m-1",
                              skill_context="Always answer in haiku.")
    assert len(bot.calls) == 2
    for call in bot.calls:
        kinds = _kinds(call["messages"])
        assert "m-1 via scripted" in kinds["runtime"] and "Today is 2025-03-14" in kinds["runtime"]
        assert kinds["skill"].endswith("Always answer in haiku.")
        order = [m.get("kind") for m in call["messages"]]
        assert order.index("runtime") < order.index("skill") < order.index(None, 1)  # before the history
    assert not _kinds(result.messages)


def test_without_them_no_layer_is_added() -> None:
    bot = ScriptedProvider(["ok"])
    AgentHarness(bot, None, None).run_turn("s", [], "hi", skill_context="   ")
    assert not {"runtime", "skill"} & set(_kinds(bot.calls[0]["messages"]))


def test_a_huge_skill_is_clipped() -> None:
    text = skill_text("x" * (MAX_SKILL_CHARS + 100))
    assert len(text) < MAX_SKILL_CHARS + 200 and "clipped" in text
