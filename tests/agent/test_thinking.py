"""ThinkLevel, ThinkingConfig and ThinkingManager (reference: thinking_manager.md + DESIGN.md)."""

from __future__ import annotations

import pytest

from jupyter_brain.agent.reflection import ReflectionResult
from jupyter_brain.agent.thinking import ThinkingConfig, ThinkingManager, ThinkLevel

# ── ThinkLevel ───────────────────────────────────────────────────────────────


def test_levels_and_values():
    assert [lvl.value for lvl in ThinkLevel] == ["off", "low", "medium", "high"]


@pytest.mark.parametrize(
    ("level", "budget"),
    [(ThinkLevel.OFF, 0), (ThinkLevel.LOW, 500), (ThinkLevel.MEDIUM, 2000), (ThinkLevel.HIGH, 5000)],
)
def test_token_budgets(level, budget):
    assert level.token_budget == budget


def test_prompt_prefix():
    assert ThinkLevel.MEDIUM.prompt_prefix == "Wrap your reasoning in <think>...</think> before your answer."
    assert ThinkLevel.OFF.prompt_prefix == ""
    for level in (ThinkLevel.LOW, ThinkLevel.MEDIUM, ThinkLevel.HIGH):
        assert "<think>...</think>" in level.prompt_prefix
    # deeper levels ask for more
    assert len(ThinkLevel.LOW.prompt_prefix) < len(ThinkLevel.HIGH.prompt_prefix)


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("medium", ThinkLevel.MEDIUM),
        ("MEDIUM", ThinkLevel.MEDIUM),
        ("  High ", ThinkLevel.HIGH),
        ("low", ThinkLevel.LOW),
        ("off", ThinkLevel.OFF),
        ("invalid", ThinkLevel.OFF),
        ("", ThinkLevel.OFF),
        (None, ThinkLevel.OFF),
        (3, ThinkLevel.OFF),
        ("med", ThinkLevel.OFF),
        (ThinkLevel.HIGH, ThinkLevel.HIGH),
    ],
)
def test_from_string(text, level):
    assert ThinkLevel.from_string(text) is level


# ── ThinkingConfig ───────────────────────────────────────────────────────────


def test_config_defaults():
    cfg = ThinkingConfig()
    assert cfg.level is ThinkLevel.OFF
    assert cfg.reflect_every == 0
    assert cfg.reflect_on_tool_error is True
    assert cfg.reflect_on_uncertainty is True


def test_manager_default_config():
    m = ThinkingManager()
    assert m.config == ThinkingConfig()
    assert m.turn_count == 0 and m.step_count == 0
    assert m.tool_errors == [] and m.last_reflection is None
    assert not m.should_reflect()


# ── lifecycle ────────────────────────────────────────────────────────────────


def mgr(level=ThinkLevel.MEDIUM, **kw) -> ThinkingManager:
    return ThinkingManager(ThinkingConfig(level=level, **kw))


def test_turn_count_increments_and_step_count_resets():
    m = mgr()
    m.on_turn_start()
    m.on_step()
    m.on_step()
    assert (m.turn_count, m.step_count) == (1, 2)
    m.on_turn_start()
    assert (m.turn_count, m.step_count) == (2, 0)
    assert m._turn_count == 2  # the reference's state name


def test_tool_errors_pending_until_reflection():
    m = mgr()
    m.on_turn_start()
    m.on_tool_error("boom")
    m.on_tool_error(ValueError("bad"))
    assert m.tool_errors == ["boom", "bad"]
    # the property is a copy
    m.tool_errors.append("x")
    assert m.tool_errors == ["boom", "bad"]
    r = ReflectionResult("ok")
    m.record_reflection(r)
    assert m.tool_errors == []
    assert m.last_reflection is r
    assert m._last_reflection is r


def test_turn_start_clears_pending_errors():
    m = mgr()
    m.on_turn_start()
    m.on_tool_error("boom")
    assert m.should_reflect()
    m.on_turn_start()
    assert m.tool_errors == []
    assert not m.should_reflect()


# ── thinking prompt ──────────────────────────────────────────────────────────


def test_thinking_prompt_unchanged_at_off():
    m = mgr(ThinkLevel.OFF)
    assert m.get_thinking_prompt("BASE") == "BASE"
    assert m.get_thinking_prompt("BASE", native=True) == "BASE"


@pytest.mark.parametrize("level", [ThinkLevel.LOW, ThinkLevel.MEDIUM, ThinkLevel.HIGH])
def test_thinking_prompt_section(level):
    prompt = mgr(level).get_thinking_prompt("BASE")
    assert prompt == f"BASE\n\n## Thinking Instructions\n{level.prompt_prefix}"


def test_thinking_prompt_native_variant():
    prompt = mgr(ThinkLevel.HIGH).get_thinking_prompt("BASE", native=True)
    assert prompt.startswith("BASE\n\n## Thinking Instructions\n")
    assert "<think>" not in prompt  # native thinking: no tags asked for
    assert "5000" in prompt  # the level's budget is mentioned


# ── should_reflect ───────────────────────────────────────────────────────────


def test_off_never_reflects_even_with_errors_or_interval():
    m = mgr(ThinkLevel.OFF, reflect_every=1)
    m.on_turn_start()
    m.on_step("I'm not sure")
    m.on_tool_error("boom")
    assert not m.should_reflect()
    assert m.reflection_trigger() is None


def test_error_triggered():
    m = mgr()
    m.on_turn_start()
    m.on_step()
    assert not m.should_reflect()
    m.on_tool_error("boom")
    assert m.should_reflect()
    assert m.reflection_trigger() == "tool_error"
    m.record_reflection(ReflectionResult("r"))
    assert not m.should_reflect()


def test_error_trigger_disabled():
    m = mgr(reflect_on_tool_error=False)
    m.on_turn_start()
    m.on_step()
    m.on_tool_error("boom")
    assert not m.should_reflect()


def test_uncertainty_trigger():
    m = mgr()
    m.on_turn_start()
    m.on_step("Hmm, I'm NOT sure which column is the key.")
    assert m.reflection_trigger() == "uncertainty"
    m.record_reflection(ReflectionResult("r"))
    assert not m.should_reflect()
    m.on_step("The answer is 42.")
    assert not m.should_reflect()


def test_uncertainty_trigger_disabled():
    m = mgr(reflect_on_uncertainty=False)
    m.on_turn_start()
    m.on_step("I don't know")
    assert not m.should_reflect()


def test_uncertainty_is_per_step():
    m = mgr()
    m.on_turn_start()
    m.on_step("uncertain")
    m.on_step("certain now: 42")  # next step's text replaces the flag
    assert not m.should_reflect()


def run_steps(m: ThinkingManager, n: int) -> list[int]:
    """Simulate the harness: after every step, reflect when due; return the steps reflected after."""
    reflected = []
    for _ in range(n):
        m.on_step("")
        if m.should_reflect():
            reflected.append(m.step_count)
            m.record_reflection(ReflectionResult(f"after {m.step_count}"))
    return reflected


def test_periodic_every_three_steps_over_nine():
    m = mgr(reflect_every=3)
    m.on_turn_start()
    assert run_steps(m, 9) == [3, 6, 9]


@pytest.mark.parametrize(("every", "steps", "expected"), [(1, 4, [1, 2, 3, 4]), (2, 5, [2, 4]), (4, 3, []), (0, 6, [])])
def test_periodic_other_intervals(every, steps, expected):
    m = mgr(reflect_every=every)
    m.on_turn_start()
    assert run_steps(m, steps) == expected


def test_periodic_counts_steps_per_turn():
    m = mgr(reflect_every=3)
    m.on_turn_start()
    assert run_steps(m, 4) == [3]
    m.on_turn_start()  # a new cell starts counting again
    assert run_steps(m, 3) == [3]


def test_no_periodic_before_first_step():
    m = mgr(reflect_every=3)
    m.on_turn_start()
    assert not m.should_reflect()


def test_no_double_reflection_for_the_same_step():
    m = mgr(reflect_every=3)
    m.on_turn_start()
    for _ in range(3):
        m.on_step()
    assert m.reflection_trigger() == "periodic"
    m.record_reflection(ReflectionResult("r"))
    assert not m.should_reflect()
    assert not m.should_reflect()  # asking again does not change it
    m.on_step()
    assert not m.should_reflect()


def test_error_reflection_on_a_periodic_step_counts_for_it():
    m = mgr(reflect_every=2)
    m.on_turn_start()
    m.on_step()
    m.on_step()
    m.on_tool_error("boom")
    assert m.reflection_trigger() == "tool_error"
    m.record_reflection(ReflectionResult("r"))
    assert not m.should_reflect()  # the periodic reflection of step 2 is already done


def test_periodic_due_without_reflection_stays_due():
    m = mgr(reflect_every=2)
    m.on_turn_start()
    m.on_step()
    m.on_step()
    assert m.should_reflect()
    assert m.should_reflect()  # still due until recorded


# ── reflection prompt ────────────────────────────────────────────────────────

QUESTIONS = (
    "What has been accomplished so far?",
    "Are we on track to answer the user's question?",
    "What information might still be missing?",
    "Should we adjust the approach?",
)


def test_reflection_prompt_has_the_four_questions_and_task():
    m = mgr()
    msgs = [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "What is the mean of df.price?"},
    ]
    prompt = m.get_reflection_prompt(msgs, [])
    for q in QUESTIONS:
        assert q in prompt
    assert "What is the mean of df.price?" in prompt
    assert "first question" not in prompt
    assert "Recent tool results" not in prompt
    assert "Note:" not in prompt


def test_reflection_prompt_last_three_tool_results_with_status():
    m = mgr()
    results = [
        {"name": f"tool{i}", "status": "ok" if i % 2 else "error", "output": f"out-{i}"} for i in range(5)
    ]
    prompt = m.get_reflection_prompt([{"role": "user", "content": "q"}], results)
    assert "tool0" not in prompt and "tool1" not in prompt
    assert "out-0" not in prompt and "out-1" not in prompt
    assert "- tool2 [error]: out-2" in prompt
    assert "- tool3 [ok]: out-3" in prompt
    assert "- tool4 [error]: out-4" in prompt
    assert prompt.index("tool2") < prompt.index("tool3") < prompt.index("tool4")


def test_reflection_prompt_clips_long_outputs():
    m = mgr()
    prompt = m.get_reflection_prompt([], [{"name": "t", "status": "ok", "output": "x" * 5000}])
    assert "x" * 300 not in prompt
    assert "x" * 200 in prompt


def test_reflection_prompt_most_recent_error_as_note():
    m = mgr()
    m.on_turn_start()
    m.on_tool_error("first failure")
    m.on_tool_error("KeyError: 'price'")
    prompt = m.get_reflection_prompt([{"role": "user", "content": "q"}], [])
    assert "Note:" in prompt
    assert "KeyError: 'price'" in prompt
    assert "first failure" not in prompt
    m.record_reflection(ReflectionResult("r"))
    assert "Note:" not in m.get_reflection_prompt([{"role": "user", "content": "q"}], [])


def test_reflection_prompt_does_not_mutate_inputs():
    m = mgr()
    msgs = [{"role": "user", "content": "q"}]
    results = [{"name": "t", "status": "ok", "output": "o"}]
    m.get_reflection_prompt(msgs, results)
    assert msgs == [{"role": "user", "content": "q"}]
    assert results == [{"name": "t", "status": "ok", "output": "o"}]
