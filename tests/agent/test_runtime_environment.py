"""``runtime_environment=False``: the runtime message names only the model, so a request is
the same on every machine and every day (``AgentMagics.runtime = "model"``)."""

from __future__ import annotations

import platform

from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.runtime_context import runtime_text
from jupyter_brain.providers.scripted import ScriptedProvider


def test_without_the_environment_only_the_model_is_named(monkeypatch) -> None:
    text = runtime_text("anthropic", "claude-sonnet-4-5", environment=False)
    assert text == "Runtime: you are answering as claude-sonnet-4-5 via anthropic."
    monkeypatch.setattr(platform, "python_version", lambda: "3.99.123")
    assert runtime_text("anthropic", "claude-sonnet-4-5", environment=False) == text


def test_the_turn_keyword_reaches_the_runtime_layer() -> None:
    bot = ScriptedProvider(["ok", "ok"])
    harness = AgentHarness(bot, None, None)
    harness.run_turn("s", [], "hi", runtime_provider="scripted", runtime_model="m-1", runtime_environment=False)
    harness.run_turn("s", [], "hi", runtime_provider="scripted", runtime_model="m-1")
    model_only, full = ({m["kind"]: m["content"] for m in call["messages"] if m.get("kind")}["runtime"]
                        for call in bot.calls)
    assert model_only == "Runtime: you are answering as m-1 via scripted."
    assert full.startswith(model_only + " Today is ") and platform.python_version() in full
