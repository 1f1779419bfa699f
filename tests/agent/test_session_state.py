"""A session keeps what it learns across cells: calibration, context level, thinking counters.

Each ``%%agent`` cell builds a new harness from the session; before, every cell started
with a fresh counter and tracker, so three similar cells each reported ``ok → warning``.
"""

from __future__ import annotations

from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.session_state import SessionState
from jupyter_brain.agent.thinking import ThinkingConfig, ThinkLevel
from jupyter_brain.agent.tools import AgentToolRegistry
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.session import AgentOptions, SessionManager

BULK = "revenue " * 520  # about 520 tokens: with the system prompt, past 70% of 1,000


def run_cell(session, provider, prompt: str, **options):
    opts = AgentOptions(provider="scripted", context_budget=1_000, auto_compact=False, **options)
    harness = session.build_harness(provider, [], opts)
    return harness, session.run(prompt, harness)


def context_events(manager, session_name: str) -> list:
    return [e for e in manager.event_log.events(session_id=session_name) if e.type == "context_warning"]


def test_three_similar_cells_report_one_warning(tmp_path):
    manager = SessionManager(tmp_path / "data")
    session = manager.current
    provider = ScriptedProvider(["ok"], repeat=True)
    for prompt in (f"first {BULK}", "second", "third"):
        run_cell(session, provider, prompt)
    events = context_events(manager, session.name)
    assert [(e.previous, e.level) for e in events] == [("ok", "warning")]
    assert session.state.context_tracker(1_000).level == "warning"


def test_a_later_crossing_names_the_real_previous_level(tmp_path):
    manager = SessionManager(tmp_path / "data")
    session = manager.current
    provider = ScriptedProvider(["ok"], repeat=True)
    run_cell(session, provider, f"first {BULK}")
    run_cell(session, provider, f"more {'margin ' * 200}")  # past 85% of the budget
    events = context_events(manager, session.name)
    assert [(e.previous, e.level) for e in events] == [("ok", "warning"), ("warning", "critical")]


def test_calibration_carries_over_to_the_next_cell(tmp_path):
    manager = SessionManager(tmp_path / "data")
    session = manager.current

    def doubled(messages, tools):  # a provider that counts twice what our tokenizer does
        reported = 2 * session.state.counter.count_request(messages, tools)
        return {"text": "ok", "usage": {"input_tokens": reported, "output_tokens": 1}}

    provider = ScriptedProvider([doubled], repeat=True)
    first, _ = run_cell(session, provider, "hello")
    assert 1.8 <= session.state.counter.factor <= 2.0
    second, _ = run_cell(session, provider, "again")
    assert second.counter is first.counter is session.state.counter
    # The second cell's first request was already estimated at the provider's scale.
    last = provider.calls[-1]
    raw = session.state.counter.count_request(last["messages"], last["tools"])
    assert second.context.last_tokens >= 1.8 * raw


def test_thinking_counters_continue_across_cells(tmp_path):
    manager = SessionManager(tmp_path / "data")
    session = manager.current
    provider = ScriptedProvider(["ok"], repeat=True)
    for _ in range(3):
        harness, _ = run_cell(session, provider, "q", think="low")
    assert harness.thinking.turn_count == 3
    assert harness.thinking.config.level is ThinkLevel.LOW


def test_reset_starts_the_state_over(tmp_path):
    manager = SessionManager(tmp_path / "data")
    session = manager.current
    run_cell(session, ScriptedProvider(["ok"]), f"first {BULK}")
    session.reset()
    assert session.state.context_tracker(1_000).level == "ok"


def test_a_changed_budget_keeps_the_level():
    state = SessionState()
    tracker = state.context_tracker(10_000)
    tracker.update(8_000)
    assert tracker.level == "warning"
    again = state.context_tracker(20_000)
    assert again is tracker and again.level == "warning" and again.context_window == 20_000
    change = again.update(1_000)
    assert change is not None and (change.previous, change.level) == ("warning", "ok")


def test_thinking_manager_takes_the_new_cells_config():
    state = SessionState()
    first = state.thinking_manager(ThinkingConfig(level=ThinkLevel.OFF))
    first.on_turn_start()
    second = state.thinking_manager(ThinkingConfig(level=ThinkLevel.HIGH, reflect_every=2))
    assert second is first and second.turn_count == 1 and second.config.reflect_every == 2


def test_a_harness_without_a_session_keeps_its_own_state():
    provider = ScriptedProvider(["a", "b"])
    harness = AgentHarness(provider, AgentToolRegistry(), None)
    result = harness.run_turn("s", [], "one")
    harness.run_turn("s", result.messages, "two")
    assert harness.thinking.turn_count == 2
    assert harness.session_state.counter is harness.counter
