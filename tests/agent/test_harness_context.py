"""The harness keeps every request inside its context budget: measured before sending,
warned about, compacted at the critical level (with events), and the compacted history
is what the session continues from. Semantic tool selection trims large registries."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.context import TokenCounter
from jupyter_brain.agent.events import CompactionEvent, ContextWarning, EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.history import history_problems, signatures
from jupyter_brain.agent.tools import AgentToolRegistry, ToolSpec, tool
from jupyter_brain.providers.scripted import ScriptedProvider

COUNTER = TokenCounter()
FILLER = " ".join(f"row{i} revenue {i * 37 % 1000} units" for i in range(60))  # ~300+ tokens


@tool
def fetch(part: int) -> str:
    """Fetch one part of the sales report."""
    return f"part {part}: {FILLER}"


def _script(turns: int, steps: int) -> list:
    out: list = []
    for t in range(turns):
        for s in range(steps):
            out.append({"text": f"turn {t} step {s}", "tool_calls": [{"name": "fetch", "arguments": {"part": s}}],
                        "thinking": [{"text": f"plan {t}.{s}", "signature": f"sig-{t}-{s}"}]})
        out.append(f"answer {t}")
    return out


@pytest.fixture(autouse=True)
def provider_counts_like_our_tokenizer(monkeypatch):
    """The scripted provider reports usage as chars/4; here it reports our own count, so
    calibration is neutral and request sizes can be checked in one unit."""
    monkeypatch.setattr("jupyter_brain.providers.scripted._estimate_tokens", COUNTER.count_request)


def _request_tokens(call: dict) -> int:
    return COUNTER.count_request(call["messages"], call["tools"])


def _harness(provider, log, **kw):
    kw.setdefault("max_steps", 20)
    return AgentHarness(provider, AgentToolRegistry([fetch]), log, token_counter=TokenCounter(), **kw)


@pytest.mark.parametrize("strategy", ["summary", "token_budget", "semantic"])
def test_requests_stay_under_the_budget_across_a_long_session(strategy, tmp_path) -> None:
    provider = ScriptedProvider(_script(turns=4, steps=6), summaries=None)
    log = EventLog(tmp_path / "events.sqlite")
    harness = _harness(provider, log, context_budget=4_000, compaction=strategy)
    history: list = []
    for t in range(4):
        result = harness.run_turn("s", history, f"question {t} about revenue")
        assert result.status == "completed", result.error
        assert history_problems(result.messages, require_final_assistant=True) == []
        assert result.messages[-1]["content"] == f"answer {t}"
        assert any(m.get("role") == "user" and m.get("content") == f"question {t} about revenue" for m in result.messages)
        history = result.messages
        # the stored history is the compacted one
        assert log.load_history("s") == history
    main_calls = [c for c in provider.calls if not c["summary"]]
    sizes = [_request_tokens(c) for c in main_calls]
    critical = harness.context.critical_tokens
    assert max(sizes) <= critical, sizes
    compactions = [e for e in log.events() if isinstance(e, CompactionEvent)]
    assert compactions and all(e.strategy == strategy and e.tokens_after < e.tokens_before for e in compactions)
    assert all(e.budget_tokens == 4_000 for e in compactions)
    assert harness.compactions == len(compactions)
    # every request still carries its own turn's prompt
    for call in main_calls:
        users = [m for m in call["messages"] if m.get("role") == "user" and m.get("kind") != "summary"]
        assert users and users[-1]["content"].startswith("question")
    # thinking signatures that survived are byte-identical to what the model sent
    kept = dict(signatures(history))
    for text, sig in kept.items():
        t, s = sig.split("-")[1:]
        assert text == f"plan {t}.{s}"


def test_summary_uses_the_model_and_falls_back_when_it_fails(tmp_path) -> None:
    provider = ScriptedProvider(_script(turns=3, steps=6),
                                summaries=["The user asked about revenue parts 0-5; all fetched.",
                                           {"error": {"message": "summary model overloaded", "kind": "overloaded"}}])
    log = EventLog(tmp_path / "e.sqlite")
    harness = _harness(provider, log, context_budget=4_000, compaction="summary")
    history: list = []
    for t in range(3):
        history = harness.run_turn("s", history, f"question {t}").messages
    events = [e for e in log.events() if isinstance(e, CompactionEvent)]
    assert len(events) >= 2
    assert events[0].fallback is None
    assert any(e.fallback and "overloaded" in e.fallback for e in events[1:]), [e.fallback for e in events]
    assert any(c["summary"] for c in provider.calls)


def test_context_levels_are_events_and_auto_compact_off_only_warns(tmp_path) -> None:
    provider = ScriptedProvider(_script(turns=1, steps=12))
    log = EventLog(":memory:")
    harness = _harness(provider, log, context_budget=4_000, auto_compact=False)
    result = harness.run_turn("s", [], "go")
    assert result.status == "completed"
    levels = [(e.previous, e.level) for e in log.events() if isinstance(e, ContextWarning)]
    assert levels[:2] == [("ok", "warning"), ("warning", "critical")]
    assert not any(isinstance(e, CompactionEvent) for e in log.events())


def test_workspace_and_tools_count_against_the_budget(tmp_path) -> None:
    big_workspace = "## Variables\n" + "\n".join(f"- v{i}: int — {i}" for i in range(500))
    provider = ScriptedProvider(_script(turns=1, steps=4))
    harness = _harness(provider, EventLog(":memory:"), context_budget=8_000, workspace=lambda: big_workspace)
    harness.run_turn("s", [], "go")
    assert all(_request_tokens(c) <= harness.context.critical_tokens for c in provider.calls if not c["summary"])
    assert harness.context.last_tokens > COUNTER.count_text(big_workspace)


def test_provider_reported_counts_calibrate_the_estimates() -> None:
    provider = ScriptedProvider([
        {"text": "x", "tool_calls": [{"name": "fetch", "arguments": {"part": 1}}], "usage": {"input_tokens": 5_000}},
        {"text": "done", "usage": {"input_tokens": 5_000}},
    ])
    harness = _harness(provider, EventLog(":memory:"))
    harness.run_turn("s", [], "go")
    assert harness.counter.factor == pytest.approx(2.0)  # clamped: the provider counts far more


def test_bad_context_settings_are_refused() -> None:
    provider = ScriptedProvider([])
    with pytest.raises(ValueError, match="at least 1,000"):
        AgentHarness(provider, None, None, context_budget=10)
    with pytest.raises(ValueError, match="between 0 and 1"):
        AgentHarness(provider, None, None, compaction_target=1.5)
    with pytest.raises(ValueError, match="unknown compaction strategy"):
        AgentHarness(provider, None, None, compaction="magic")


def _many_tools() -> list[ToolSpec]:
    topics = ["weather", "stocks", "revenue", "email", "calendar", "maps", "music", "news", "sports", "recipes"]
    specs = []
    for topic in topics:
        for verb in ("get", "list", "summarize"):
            def fn(query: str = "") -> str:
                return "ok"
            fn.__name__ = f"{verb}_{topic}"
            fn.__doc__ = f"{verb.capitalize()} {topic} data for the user."
            specs.append(tool(fn))
    return specs


def test_semantic_tool_selection_offers_the_relevant_tools_and_keeps_used_ones() -> None:
    provider = ScriptedProvider(["ok"])
    registry = AgentToolRegistry(_many_tools())
    harness = AgentHarness(provider, registry, None, enable_semantic_selection=True, max_tools_per_turn=5)
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "get_music", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "get_music", "content": "ok", "is_error": False},
        {"role": "assistant", "content": "done"},
    ]
    harness.run_turn("s", history, "Summarize the revenue numbers")
    offered = [t["name"] for t in provider.calls[0]["tools"]]
    assert len(offered) == 6 and offered[-1] == "find_tools"  # the other tools wait behind find_tools
    assert {"summarize_revenue", "get_music"} <= set(offered)
    assert "read_artifact" not in offered  # offered once a result names an artifact
    all_names = [t["name"] for t in registry.schemas()]
    assert offered[:-1] == [n for n in all_names if n in offered]  # original order


def test_without_semantic_selection_every_tool_is_offered() -> None:
    provider = ScriptedProvider(["ok"])
    registry = AgentToolRegistry(_many_tools())
    AgentHarness(provider, registry, None, max_tools_per_turn=5).run_turn("s", [], "revenue")
    assert len(provider.calls[0]["tools"]) == len(registry.schemas())


class ExactCounting(ScriptedProvider):
    """A provider with a count endpoint that answers ``exact`` for every request."""

    def __init__(self, responses, exact: int) -> None:
        super().__init__(responses)
        self.exact = exact
        self.counted = 0

    def exact_input_tokens(self, messages, tools):
        self.counted += 1
        return self.exact


@pytest.mark.parametrize(("exact", "compacts"), [(1_500, False), (3_900, True)])
def test_the_provider_exact_count_decides_before_compacting(exact, compacts) -> None:
    provider = ExactCounting(_script(turns=1, steps=10), exact=exact)
    log = EventLog(":memory:")
    harness = _harness(provider, log, context_budget=4_000, compaction="token_budget")
    result = harness.run_turn("s", [], "go")
    assert result.status == "completed"
    assert provider.counted >= 1  # asked only when the estimate reached the critical level
    assert provider.counted < len([c for c in provider.calls if not c["summary"]])
    assert any(isinstance(e, CompactionEvent) for e in log.events()) is compacts
