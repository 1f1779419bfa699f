"""The harness with the thinking phase on: later requests carry a [Thinking] state instead of
the bulk tool output, the history stays valid, and the phase's tokens are counted apart."""

from __future__ import annotations

from jupyter_brain.agent.cost import SessionCostTracker
from jupyter_brain.agent.events import EventLog, ThinkingPhaseEvent
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.history import history_problems
from jupyter_brain.agent.thinking_phase import THINKING_PREFIX
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.scripted import ScriptedProvider

BULK = " ".join(f"row_{i}={i * 31 % 997};" for i in range(150))


@tool
def fetch(part: int) -> str:
    """Fetch one part."""
    note = "\nNote: the audit code for North is AX-4821." if part == 1 else ""
    return f"part {part}: {BULK}{note}"


def _steps(n: int) -> list:
    return [{"text": f"Fetching {i}.", "tool_calls": [{"name": "fetch", "arguments": {"part": i}}]} for i in range(n)]


def _text(request: list[dict]) -> str:
    return "\n".join(str(m.get("content", "")) for m in request)


def test_phase_on_replaces_bulk_output_and_counts_apart() -> None:
    provider = ScriptedProvider([*_steps(6), "done"])
    thinker = ScriptedProvider(summaries=["Summary: parts fetched.\nState: reading.\nNext: next part."] * 10,
                               model="claude-3-5-haiku-20241022")
    log = EventLog(":memory:")
    costs = SessionCostTracker()
    harness = AgentHarness(provider, AgentToolRegistry([fetch]), log, max_steps=10, thinking_phase=True,
                           thinking_strategy="summary", thinking_provider=thinker, cost_tracker=costs,
                           workspace=lambda: "<workspace>x = 1</workspace>")
    result = harness.run_turn("s", [], "Go through the parts.")
    assert result.status == "completed"
    assert history_problems(result.messages, require_final_assistant=True) == []
    requests = [c["messages"] for c in provider.calls]
    assert len(requests) == 7 and not any(c["summary"] for c in provider.calls)
    last = requests[-1]
    assert last[-1]["content"].startswith(THINKING_PREFIX)
    assert "AX-4821" in last[-1]["content"]
    assert _text(last).count(BULK) == 1  # only the results the model has not seen yet
    assert any(m.get("kind") == "workspace" for m in last)  # the workspace, fresh
    assert sum(str(m.get("content", "")).startswith(THINKING_PREFIX) for m in result.messages) == 1
    # counted apart: the main totals are the main model's, the phase's are its own
    assert result.thinking_phases == 6 and result.thinking_phase_calls == 6 == len(thinker.calls)
    assert result.thinking_phase_input_tokens > 0 and result.thinking_phase_tokens_saved > 0
    assert result.input_tokens == sum(s.input_tokens for s in result.steps)
    turn_cost = costs.turns[0]
    assert turn_cost.thinking_phase_calls == 6
    assert turn_cost.thinking_phase_usage.input_tokens == result.thinking_phase_input_tokens
    assert turn_cost.usage.input_tokens == result.input_tokens
    events = [e for e in log.events() if isinstance(e, ThinkingPhaseEvent)]
    assert len(events) == 6 and events[-1].next_actions == "next part." and events[-1].tokens_after < events[-1].tokens_before
    # the stored history is the compressed one
    stored = log.load_history("s")
    assert [m.get("content") for m in stored] == [m.get("content") for m in result.messages]


def test_phase_off_changes_nothing() -> None:
    provider = ScriptedProvider([*_steps(3), "done"])
    result = AgentHarness(provider, AgentToolRegistry([fetch]), None, max_steps=5).run_turn("s", [], "go")
    assert result.thinking_phases == 0 and result.thinking_phase_calls == 0
    assert _text(provider.calls[-1]["messages"]).count(BULK) == 3


def test_failed_phase_sends_the_request_uncompressed(monkeypatch) -> None:
    from jupyter_brain.agent.thinking_phase import ThinkingProcessor

    def boom(self, *a, **k):
        raise RuntimeError("bug")

    monkeypatch.setattr(ThinkingProcessor, "perform_thinking", boom)
    provider = ScriptedProvider([*_steps(3), "done"])
    log = EventLog(":memory:")
    harness = AgentHarness(provider, AgentToolRegistry([fetch]), log, max_steps=5, thinking_phase=True,
                           thinking_strategy="token_budget")
    result = harness.run_turn("s", [], "go")
    assert result.status == "completed" and result.thinking_phases == 0
    assert _text(provider.calls[-1]["messages"]).count(BULK) == 3
    fallbacks = [e.fallback for e in log.events() if isinstance(e, ThinkingPhaseEvent)]
    assert len(fallbacks) == 3 and all("uncompressed" in f for f in fallbacks)
