"""AgentHarness.run_turn end to end with the scripted provider."""

from __future__ import annotations

import functools
import threading

import pytest

from jupyter_brain.agent.budget import TurnBudget
from jupyter_brain.agent.callbacks import AgentCallbacks
from jupyter_brain.agent.cost import SessionCostTracker
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness, TurnResult
from jupyter_brain.agent.strategies import Branch, FinalAnswer, Thought
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.base import ProviderError, StreamEvent, Usage
from jupyter_brain.providers.scripted import ScriptedProvider


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool(effect="execute")
def run_code(code: str) -> str:
    """Pretend to execute code."""
    return "ran"


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def assert_valid_history(messages):
    """Every tool call is answered, right after its assistant message, and the turn ends with the assistant."""
    pending: set[str] = set()
    for msg in messages:
        if msg["role"] == "assistant":
            assert not pending, f"unanswered tool calls {pending}"
            pending = {c["id"] for c in msg.get("tool_calls", [])}
        elif msg["role"] == "tool":
            assert msg["tool_call_id"] in pending
            pending.discard(msg["tool_call_id"])
        else:
            assert not pending, f"unanswered tool calls {pending} before a {msg['role']} message"
    assert not pending
    assert messages[-1]["role"] == "assistant"


def make(responses, *, tools=(lookup,), log=None, **kwargs):
    provider = ScriptedProvider(responses)
    log = log if log is not None else EventLog(":memory:")
    harness = AgentHarness(provider, AgentToolRegistry(list(tools)), log, **kwargs)
    return harness, provider, log


@pytest.mark.parametrize("stream", [False, True])
def test_tool_loop_answer_and_usage(stream):
    harness, provider, log = make(
        [
            {"text": "Let me look.", "tool_calls": [call("lookup", key="a")],
             "usage": {"input_tokens": 100, "output_tokens": 10, "cache_read_tokens": 5, "cache_creation_tokens": 7}},
            {"text": "It is value of a.",
             "usage": {"input_tokens": 120, "output_tokens": 20, "cache_read_tokens": 50, "cache_creation_tokens": 0}},
        ],
        stream=stream,
    )
    result = harness.run_turn("s", [], "what is a?")
    assert isinstance(result, TurnResult)
    assert result.status == "completed"
    assert result.text == "It is value of a."
    assert (result.input_tokens, result.output_tokens) == (220, 30)
    assert (result.cache_read_tokens, result.cache_creation_tokens) == (55, 7)
    assert [t.name for t in result.tool_calls] == ["lookup"]
    assert result.tool_calls[0].output == "value of a"
    assert_valid_history(result.messages)
    # The tool result reached the model in the second request.
    second = provider.calls[1]["messages"]
    assert any(m["role"] == "tool" and m["content"] == "value of a" for m in second)
    types = [e.type for e in log.events(turn_id=result.turn_id)]
    assert types[0] == "turn_start" and types[-1] == "turn_end"
    for needed in ("step_start", "text_delta", "tool_call_start", "tool_call_args", "tool_call_end", "usage", "step_end"):
        assert needed in types


def test_stream_and_no_stream_give_the_same_view_events():
    script = [
        {"text": "<think>plan it</think>Looking.", "tool_calls": [call("lookup", key="x")]},
        {"text": "Done."},
    ]

    def view_events(stream):
        harness, _, log = make(list(script), stream=stream)
        result = harness.run_turn("s", [], "q")
        merged: list[tuple] = []
        for e in log.events(turn_id=result.turn_id):
            if e.type in ("tool_call_args_delta", "usage", "turn_start", "turn_end"):
                continue
            key = (e.type, getattr(e, "step", None), getattr(e, "text", None), getattr(e, "name", None),
                   getattr(e, "status", None))
            merged.append(key)
        return merged

    assert view_events(False) == view_events(True)


def test_system_prompt_has_strategy_and_thinking_and_workspace_is_fresh_not_stored():
    renders = iter(["## Workspace v1", "## Workspace v2"])
    harness, provider, _ = make(
        [{"text": "a", "tool_calls": [call("lookup", key="k")]}, {"text": "b"}],
        strategy="react", think_level="high", workspace=lambda: next(renders),
    )
    result = harness.run_turn("s", [], "q")
    first, second = (c["messages"] for c in provider.calls[:2])
    assert "ReAct" in first[0]["content"] and "## Thinking Instructions" in first[0]["content"]
    assert first[1] == {"role": "system", "content": "## Workspace v1", "kind": "workspace"}
    assert second[1]["content"] == "## Workspace v2"
    assert sum(m.get("kind") == "workspace" for m in second) == 1
    assert all(m.get("kind") != "workspace" for m in result.messages)


def test_think_off_leaves_base_prompt_unchanged():
    harness, provider, _ = make(["ok"], system_prompt="BASE")
    harness.run_turn("s", [], "q")
    assert provider.calls[0]["messages"][0]["content"] == "BASE"


def test_max_steps_ends_with_explicit_message_and_valid_history():
    harness, _, log = make([{"text": f"step {i}", "tool_calls": [call("lookup", key=str(i))]} for i in range(3)],
                           max_steps=3)
    result = harness.run_turn("s", [], "loop forever")
    assert result.status == "max_steps"
    assert "step limit" in result.text and "--max-steps" in result.text
    assert len(result.steps) == 3
    assert_valid_history(result.messages)
    end = log.events(turn_id=result.turn_id)[-1]
    assert end.type == "turn_end" and end.status == "max_steps"


class _TurnClock:
    """The turns' deadline clock: it moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def turn_clock(monkeypatch):
    from jupyter_brain.agent.loop import turn as turn_module  # where the loop builds its budget

    clock = _TurnClock()
    monkeypatch.setattr(turn_module, "TurnBudget", functools.partial(TurnBudget, clock=clock))
    return clock


@pytest.fixture()
def hang():
    """A tool that times out (0.2 s) and stays blocked until the test is over."""
    release = threading.Event()

    @tool(tool_timeout_s=0.2, retry_on_timeout=False)
    def hang() -> str:
        """Never returns in time."""
        release.wait(60)
        return "late"

    yield hang
    release.set()


def test_deadline_ends_turn_with_timeout(turn_clock, hang):
    # The tool times out on its own 0.2 s; the turn's 5 s deadline passes while it runs.
    def deadline_passes(event):
        turn_clock.now += 5

    harness, provider, log = make(
        [{"text": "slow", "tool_calls": [call("hang")]}, {"text": "never"}],
        tools=(hang,), timeout_s=5, max_steps=5, callbacks=AgentCallbacks(on_tool_end=deadline_passes),
    )
    result = harness.run_turn("s", [], "q")
    assert result.tool_calls[0].status == "timeout" and "timed out after 0.2s" in result.tool_calls[0].output
    assert result.status == "timeout"
    assert "5s time limit" in result.text and "--timeout" in result.text
    assert len(provider.calls) == 1  # no model call after the deadline
    assert_valid_history(result.messages)
    end = log.events(turn_id=result.turn_id)[-1]
    assert end.type == "turn_end" and end.status == "timeout"


def test_a_tool_timeout_before_the_deadline_lets_the_turn_go_on(turn_clock, hang):
    harness, provider, _ = make(
        [{"text": "slow", "tool_calls": [call("hang")]}, {"text": "done without it"}],
        tools=(hang,), timeout_s=5, max_steps=5,
    )
    result = harness.run_turn("s", [], "q")  # the turn's clock stands still: its deadline never comes
    assert result.tool_calls[0].status == "timeout" and "timed out after 0.2s" in result.tool_calls[0].output
    assert result.status == "completed" and result.text == "done without it"
    assert len(provider.calls) == 2
    assert_valid_history(result.messages)


def test_provider_error_keeps_session_usable():
    harness, _, log = make(
        [{"text": "", "tool_calls": [call("lookup", key="a")]},
         {"error": {"kind": "overloaded", "message": "Overloaded", "status_code": 529}},
         {"text": "recovered"}],
    )
    first = harness.run_turn("s", [], "q1")
    assert first.status == "error"
    assert "overloaded" in first.text
    assert_valid_history(first.messages)
    errors = [e for e in log.events(turn_id=first.turn_id) if e.type == "error"]
    assert errors and errors[0].kind == "overloaded"
    second = harness.run_turn("s", first.messages, "q2")
    assert second.status == "completed" and second.text == "recovered"
    assert_valid_history(second.messages)


class _InterruptingProvider:
    """Streams some text, then the user presses Ctrl-C."""

    name = "fake"
    model = "fake"

    def generate(self, messages, tools, **kw):
        raise AssertionError("not used")

    def generate_stream(self, messages, tools, **kw):
        yield StreamEvent(type="text", text="partial ")
        yield StreamEvent(type="text", text="answer")
        raise KeyboardInterrupt


def test_keyboard_interrupt_mid_stream_is_logged_and_history_valid():
    log = EventLog(":memory:")
    harness = AgentHarness(_InterruptingProvider(), AgentToolRegistry(), log, stream=True)
    result = harness.run_turn("s", [], "q")
    assert result.status == "interrupted"
    assert result.messages[-1]["role"] == "assistant"
    assert result.messages[-1]["content"].startswith("partial answer")
    assert_valid_history(result.messages)
    assert log.turns("s")[0].status == "interrupted"


def test_interrupt_during_tools_answers_every_call():
    @tool
    def boom() -> str:
        """Simulates Ctrl-C arriving while tools run."""
        return "x"

    harness, _, log = make([{"text": "", "tool_calls": [call("boom"), call("lookup", key="b")]}], tools=(boom, lookup))
    original = harness._executor.execute

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    harness._executor.execute = interrupted
    result = harness.run_turn("s", [], "q")
    harness._executor.execute = original
    assert result.status == "interrupted"
    assert_valid_history(result.messages)
    ends = [e for e in log.events(turn_id=result.turn_id) if e.type == "tool_call_end"]
    assert {e.status for e in ends} == {"interrupted"} and len(ends) == 2


def test_cancel_event_stops_before_next_step():
    cancel = threading.Event()

    def second(messages, tools):
        cancel.set()
        return {"text": "", "tool_calls": [call("lookup", key="z")]}

    harness, _, _ = make([{"text": "", "tool_calls": [call("lookup", key="a")]}, second, "never"])
    result = harness.run_turn("s", [], "q", cancel=cancel)
    assert result.status == "interrupted"
    assert_valid_history(result.messages)


def test_periodic_reflection_after_steps_3_6_9_not_in_messages():
    script = [{"text": f"s{i}", "tool_calls": [call("lookup", key=str(i))]} for i in range(8)] + ["final"]
    reflections = []
    harness, provider, log = make(
        script, max_steps=9, think_level="medium", reflect_every=3, max_reflections=4,
        callbacks=AgentCallbacks(on_reflection=reflections.append),
    )
    result = harness.run_turn("s", [], "q")
    assert result.status == "completed"
    events = [e for e in log.events(turn_id=result.turn_id) if e.type == "reflection"]
    assert [e.step for e in events] == [3, 6, 9]
    assert all(e.trigger == "periodic" for e in events)
    assert len(result.reflections) == 3 == len(reflections)
    assert not any("reflect" in str(m.get("content", "")).lower() for m in result.messages if m["role"] != "tool")
    # Reflection calls are text-only.
    assert all(c["tools"] == [] for c in provider.calls if c["reflection"])


def test_reflection_on_tool_error_and_budget_stub_shown_once():
    @tool
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    script = [{"text": "", "tool_calls": [call("broken")]} for _ in range(4)] + ["done"]
    harness, _, log = make(script, tools=(broken,), max_steps=6, think_level="low", max_reflections=2)
    result = harness.run_turn("s", [], "q")
    refl = [e for e in log.events(turn_id=result.turn_id) if e.type == "reflection"]
    assert [e.trigger for e in refl[:2]] == ["tool_error", "tool_error"]
    assert not refl[0].skipped and not refl[1].skipped
    stubs = [e for e in refl if e.skipped]
    assert len(stubs) == 1 and stubs[0].reflection == "[budget exhausted]"
    assert "disk on fire" in result.tool_calls[0].output


def test_no_reflection_when_think_off_even_with_errors():
    @tool
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("x")

    harness, _, log = make([{"text": "", "tool_calls": [call("broken")]}, "ok"], tools=(broken,), reflect_every=1)
    result = harness.run_turn("s", [], "q")
    assert not [e for e in log.events(turn_id=result.turn_id) if e.type == "reflection"]


def test_strategy_steps_parsed_and_emitted_tot():
    text = (
        "=== Decision Point ===\nCandidate 1: diff by month → Score: 0.9\n"
        "Candidate 2: guess → Score: 0.2\nCandidate 3: plot → Score: 0.5\n"
        "Selected: Candidate 1 (score: 0.9)\nReason: exact\nFinal Answer: March"
    )
    harness, _, log = make([text], strategy="tot", stream=True)
    result = harness.run_turn("s", [], "q")
    kinds = [type(s) for s in result.strategy_steps]
    assert kinds.count(Branch) == 4 and Thought in kinds and kinds[-1] is FinalAnswer
    selected = [s for s in result.strategy_steps if isinstance(s, Branch) and s.selected]
    assert selected[0].branch_id == 1 and selected[0].thought == "diff by month"
    emitted = [e for e in log.events(turn_id=result.turn_id) if e.type == "strategy_step"]
    assert len(emitted) == len(result.strategy_steps)


def test_strategy_limit_stops_turn():
    text = "Reflect: not good\nRevised plan: again"
    script = [{"text": text, "tool_calls": [call("lookup", key=str(i))]} for i in range(6)]
    harness, _, _ = make(script, strategy="reflexion", max_steps=10)
    harness.strategy.max_reflections = 2
    result = harness.run_turn("s", [], "q")
    assert result.status == "strategy_limit"
    assert "Reflexion" in result.text
    assert_valid_history(result.messages)


def test_permission_denied_goes_back_to_model():
    harness, provider, _ = make([{"text": "", "tool_calls": [call("run_code", code="1")]}, "ok"], tools=(run_code,))
    harness.tools.permission_mode = harness.tools.permission_mode.READ_ONLY
    result = harness.run_turn("s", [], "q")
    assert result.tool_calls[0].status == "denied"
    tool_msg = next(m for m in provider.calls[1]["messages"] if m["role"] == "tool")
    assert tool_msg["is_error"] and "not allowed" in tool_msg["content"]


def test_approver_is_asked_in_ask_mode():
    asked = []
    provider = ScriptedProvider([{"text": "", "tool_calls": [call("run_code", code="1")]}, "ok"])
    harness = AgentHarness(provider, AgentToolRegistry([run_code]), EventLog(), approver=lambda c, s, a: asked.append(a) or True)
    result = harness.run_turn("s", [], "q")
    assert asked == [{"code": "1"}]
    assert result.tool_calls[0].status == "ok"


def test_large_output_goes_to_artifact_and_can_be_read_back():
    @tool
    def big() -> str:
        """Huge output."""
        return "x" * 30_000 + "END"

    harness, provider, _ = make(
        [{"text": "", "tool_calls": [call("big")]},
         lambda messages, tools: {"text": "", "tool_calls": [call("read_artifact", handle=_handle(messages), offset=29_990, length=20)]},
         "done"],
        tools=(big,),
    )
    result = harness.run_turn("s", [], "q")
    first = result.tool_calls[0]
    assert first.artifact and len(first.output) < 12_000 and "read_artifact" in first.output
    assert result.tool_calls[1].output.startswith("xxxxxxxxxxEND")


def _handle(messages):
    import re

    tool_msg = next(m for m in reversed(messages) if m["role"] == "tool")
    return re.search(r"artifact '([^']+)'", tool_msg["content"]).group(1)


def test_cost_tracker_and_event_log_history_persist(tmp_path):
    path = tmp_path / "events.sqlite"
    tracker = SessionCostTracker()
    provider = ScriptedProvider([{"text": "hi", "usage": {"input_tokens": 1_000_000, "output_tokens": 0}}], model="claude-sonnet-4-5-20250929")
    provider.name = "anthropic"
    harness = AgentHarness(provider, None, EventLog(path), cost_tracker=tracker)
    result = harness.run_turn("sess", [], "q")
    assert result.cost_usd == pytest.approx(3.0)
    assert tracker.total_cost_usd == pytest.approx(3.0)
    harness.event_log.close()
    reopened = EventLog(path)
    assert reopened.load_history("sess") == result.messages
    assert reopened.turns("sess")[0].status == "completed"


def test_redact_logs_masks_keys_in_event_log():
    secret = "sk-ant-api03-" + "A" * 40
    harness, _, log = make([f"your key is {secret}"], redact_logs=True)
    result = harness.run_turn("s", [], f"use {secret}")
    dumped = "".join(e.model_dump_json() for e in log.events(turn_id=result.turn_id))
    assert secret not in dumped and "[REDACTED]" in dumped
    assert secret not in str(log.load_history("s"))


def test_failing_callback_never_breaks_turn():
    def bad(_):
        raise RuntimeError("ui bug")

    harness, _, _ = make(["fine"], callbacks=AgentCallbacks(on_event=bad, on_stream_chunk=bad), stream=True)
    assert harness.run_turn("s", [], "q").text == "fine"


def test_history_continues_across_turns():
    harness, provider, _ = make(["first answer", "second answer"])
    r1 = harness.run_turn("s", [], "one")
    r2 = harness.run_turn("s", r1.messages, "two")
    sent = provider.calls[1]["messages"]
    assert [m["content"] for m in sent if m["role"] in ("user", "assistant")] == ["one", "first answer", "two"]
    assert len(r2.new_messages) == 2


def test_usage_summed_including_reflection():
    harness, _, _ = make(
        [{"text": "", "tool_calls": [call("lookup", key="a")], "usage": Usage(input_tokens=10, output_tokens=1)},
         {"text": "ok", "usage": {"input_tokens": 10, "output_tokens": 1}}],
        think_level="low", reflect_every=1,
    )
    result = harness.run_turn("s", [], "q")
    assert result.input_tokens > 20  # reflections add their estimated usage


def test_provider_error_type_is_clear():
    err = ProviderError("Overloaded", kind="overloaded", status_code=529, provider="anthropic")
    assert str(err) == "anthropic overloaded error (HTTP 529): Overloaded"


def test_react_text_steps_do_not_end_the_turn_early():
    cycle = "Thought: next\nAction: lookup\nObservation: fine"
    script = [{"text": cycle, "tool_calls": [call("lookup", key=str(i))]} for i in range(7)] + ["Final Answer: done"]
    harness, _, _ = make(script, strategy="react", max_steps=10)
    result = harness.run_turn("s", [], "q")
    assert len(result.strategy_steps) > 15  # more parsed steps than ReAct's max_steps...
    assert result.status == "completed" and result.text == "done"  # ...yet no early stop
    assert result.raw_text == "Final Answer: done"  # the answer as written (#40)


def test_strategy_cycle_limit_counts_model_calls():
    script = [{"text": "Thought: again", "tool_calls": [call("lookup", key=str(i))]} for i in range(5)]
    harness, _, _ = make(script, strategy="react", max_steps=10)
    harness.strategy._max_steps = 3
    result = harness.run_turn("s", [], "q")
    assert result.status == "strategy_limit" and len(result.steps) == 3
    assert_valid_history(result.messages)


def test_final_answer_beside_tool_call_lets_model_see_results():
    harness, provider, _ = make(
        [{"text": "Final Answer: probably x", "tool_calls": [call("lookup", key="x")]}, "Final Answer: value of x"],
        strategy="react",
    )
    result = harness.run_turn("s", [], "q")
    assert result.status == "completed" and result.text == "value of x"
    assert len(provider.calls) == 2


def test_uncertainty_reflection_is_labelled_and_logged_before_step_end():
    harness, _, log = make(
        [{"text": "I'm not sure which column holds revenue.", "tool_calls": [call("lookup", key="cols")]}, "ok"],
        think_level="low",
    )
    result = harness.run_turn("s", [], "q")
    events = log.events(turn_id=result.turn_id)
    types = [e.type for e in events]
    refl = next(e for e in events if e.type == "reflection")
    assert refl.trigger == "uncertainty"
    assert types.index("reflection") < types.index("step_end")


def test_uncertain_final_answer_does_not_trigger_reflection():
    harness, provider, _ = make(["I'm not sure, but probably March."], think_level="low")
    harness.run_turn("s", [], "q")
    assert not any(c["reflection"] for c in provider.calls)


class _WatchedLock:
    """The harness's turn lock, telling the test when a second turn has to wait for it."""

    def __init__(self, lock) -> None:
        self._lock = lock
        self.waiting = threading.Event()

    def __enter__(self):
        if not self._lock.acquire(blocking=False):
            self.waiting.set()
            self._lock.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self._lock.release()


def test_concurrent_turns_on_one_harness_are_serialised():
    entered = threading.Event()
    release = threading.Event()
    active = []  # model calls in progress when each one started
    running = [0]
    guard = threading.Lock()

    def slow(messages, tools):
        with guard:
            active.append(running[0])
            running[0] += 1
        entered.set()
        release.wait(60)
        with guard:
            running[0] -= 1
        return "done"

    harness, _, _ = make([slow, slow])
    harness._turn_lock = watched = _WatchedLock(harness._turn_lock)
    results = []

    def turn():
        results.append(harness.run_turn("s", [], "q"))

    first = threading.Thread(target=turn)
    first.start()
    try:
        assert entered.wait(60)  # the first turn is inside its model call
        second = threading.Thread(target=turn)
        second.start()
        assert watched.waiting.wait(60)  # the second turn waits for the first
        assert active == [0]  # ...and has not reached the model
    finally:
        release.set()
    for t in (first, second):
        t.join(60)
    assert active == [0, 0]  # the second turn's model call came after the first's
    assert [r.status for r in results] == ["completed", "completed"]
