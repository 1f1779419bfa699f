"""The context pack in a turn: ``run_turn(top_k=N)`` retrieves N passages into the
"context_pack" layer of every request (never the history), emits ``ContextPackEvent``
and fills ``TurnResult.context_pack_json``."""

from __future__ import annotations

from pathlib import Path

from jupyter_brain.agent.context_pack import ContextPack, build_context_pack
from jupyter_brain.agent.context_pack.pack import HEADER, MAX_TOP_K
from jupyter_brain.agent.events import ContextPackEvent, ErrorEvent
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.scripted import ScriptedProvider


@tool
def noop() -> str:
    """Do nothing."""
    return "done"


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "pricing.md").write_text("# Pricing\n\nThe premium plan costs 49 euros per month.\n", encoding="utf-8")
    (tmp_path / "other.py").write_text("def unrelated():\n    return 1\n", encoding="utf-8")
    for i in range(8):
        (tmp_path / f"note{i}.txt").write_text(f"note {i}: premium tier", encoding="utf-8")
    return tmp_path


def _run(tmp_path: Path, top_k: int, responses: list | None = None, **kw):
    bot = ScriptedProvider(responses or ["The premium plan costs 49 euros."])
    events: list = []
    harness = AgentHarness(bot, AgentToolRegistry([noop]), None, working_directory=str(tmp_path), **kw)
    result = harness.run_turn("s", [], "How much is the premium plan?", top_k=top_k, on_event=events.append)
    return bot, result, events


def _layer(messages: list[dict], kind: str) -> list[dict]:
    return [m for m in messages if m.get("kind") == kind]


def test_top_k_passages_go_into_each_request_and_not_into_history(tmp_path: Path) -> None:
    step1 = {"text": "checking", "tool_calls": [{"name": "noop", "arguments": {}}]}
    bot, result, events = _run(_folder(tmp_path), 3, [step1, "It costs 49 euros."])
    assert len(bot.calls) == 2
    for call in bot.calls:
        (layer,) = _layer(call["messages"], "context_pack")
        assert layer["role"] == "system" and layer["content"].startswith(HEADER)
        assert "[pricing.md:1]" in layer["content"] and "49 euros per month" in layer["content"]
    assert not _layer(result.messages, "context_pack")
    assert all("49 euros per month" not in str(m.get("content")) for m in result.messages)
    pack = result.context_pack_json
    assert pack["query"] == "How much is the premium plan?" and len(pack["passages"]) == 3
    assert pack["passages"][0]["anchor"] == "pricing.md:1"
    assert set(pack["passages"][0]) == {"anchor", "path", "text", "score"}
    (event,) = [e for e in events if isinstance(e, ContextPackEvent)]
    assert event.passages == pack["passages"] and event.query == pack["query"]


def test_top_k_zero_sends_no_pack(tmp_path: Path) -> None:
    bot, result, events = _run(_folder(tmp_path), 0)
    assert not _layer(bot.calls[0]["messages"], "context_pack")
    assert result.context_pack_json is None and not any(isinstance(e, ContextPackEvent) for e in events)


def test_no_match_gives_an_empty_pack_and_no_layer(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("bananas", encoding="utf-8")
    bot, result, events = _run(tmp_path, 5)
    assert not _layer(bot.calls[0]["messages"], "context_pack")
    assert result.context_pack_json == {"query": "How much is the premium plan?", "passages": []}


def test_an_indexing_failure_is_a_recoverable_error_and_the_turn_goes_on(tmp_path: Path) -> None:
    harness = AgentHarness(ScriptedProvider(["fine"]), None, None, working_directory=str(tmp_path / "missing"))
    seen: list = []
    result = harness.run_turn("s", [], "premium", top_k=3, on_event=seen.append)
    assert result.status == "completed" and result.text == "fine" and result.context_pack_json is None
    (error,) = [e for e in seen if isinstance(e, ErrorEvent)]
    assert error.kind == "context_pack" and error.recoverable and "not a directory" in error.message


def test_top_k_is_capped(tmp_path: Path) -> None:
    for i in range(MAX_TOP_K + 10):
        (tmp_path / f"n{i}.txt").write_text("premium", encoding="utf-8")
    assert len(build_context_pack(str(tmp_path), "premium", 500).passages) == MAX_TOP_K


def test_an_empty_pack_renders_nothing() -> None:
    assert ContextPack("q").render() == ""


def test_keys_in_workspace_files_are_masked_before_the_request(tmp_path: Path) -> None:
    key = "sk-ant-" + "a1b2c3d4" * 4
    (tmp_path / "settings.toml").write_text(f'[premium]\napi_key = "{key}"\n', encoding="utf-8")
    bot, result, events = _run(tmp_path, 3)
    (layer,) = _layer(bot.calls[0]["messages"], "context_pack")
    assert "settings.toml:1" in layer["content"] and key not in layer["content"] and "[REDACTED]" in layer["content"]
    assert key not in str(result.context_pack_json) and key not in str([e.model_dump() for e in events])
