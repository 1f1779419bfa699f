"""Fault-proof sessions: randomised faults through the real harness, providers and SDKs.

Each scenario (see ``fault_scenarios.py``) is a multi-turn session against the mock
servers with HTTP errors, broken streams, bad tool calls, failing and hanging tools and
interrupts at random points; after every turn the harness must have returned a valid
history, the event log, the widget and the text view must agree with it, and the
session must go on working. Hypothesis runs a fixed, derandomised sample; the explicit
cases below pin each fault kind and the bugs the property run found.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fault_scenarios import (
    FaultRig,
    Scenario,
    StepPlan,
    anthropic_body_problems,
    build_scenario,
    openai_body_problems,
    run_scenario,
    single_fault,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.history import history_problems
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.scripted import ScriptedProvider


@pytest.fixture(scope="module")
def rig() -> Iterator[FaultRig]:
    with FaultRig() as r:
        yield r


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    return build_scenario(lambda lo, hi: draw(st.integers(lo, hi)))


def assert_ok(report) -> None:
    assert report.ok, f"{report.scenario.describe()}\n" + "\n".join(report.problems)


@settings(max_examples=80, deadline=None, derandomize=True, database=None, print_blob=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenario=scenarios())
def test_random_fault_scenarios_keep_the_session_usable(rig: FaultRig, scenario: Scenario) -> None:
    assert_ok(run_scenario(rig, scenario))


# ── one explicit scenario per fault kind (both providers, both stream modes) ─────

CASES = {
    "http_429 retried": dict(fault="http_429", count=1),
    "http_429 surfaces": dict(fault="http_429", count=2),
    "http_500 retried": dict(fault="http_500", count=1),
    "http_500 surfaces": dict(fault="http_500", count=2),
    "http_529 surfaces": dict(fault="http_529", count=2),
    "conn_reset retried": dict(fault="conn_reset", count=1),
    "conn_reset surfaces": dict(fault="conn_reset", count=2),
    "stream_error overloaded": dict(fault="stream_error", at=0.5),
    "stream_error api_error at start": dict(fault="stream_error", at=0.0, error_type="api_error"),
    "drop mid-stream": dict(fault="drop", at=0.4),
    "drop on the final answer": dict(fault="drop", at=0.9, step=3),
    "truncate mid-stream": dict(fault="truncate", at=0.7),
    "cancel mid-stream": dict(fault="cancel", at=0.3),
    "cancel on the final answer": dict(fault="cancel", at=0.9, step=3),
    "ctrl_c mid-stream": dict(fault="ctrl_c", at=0.5),
    "ctrl_c on the final answer": dict(fault="ctrl_c", at=0.0, step=3),
    # Found by the property run (fixed in harness.py): Ctrl-C while the turn start is
    # drawn escaped run_turn; at the usage event the finished reply was dropped; during
    # tools the finished calls were reported "[not run]"; at the final step end the log
    # and the session's history disagreed.
    "ctrl_c_any at the turn start": dict(fault="ctrl_c_any", at=0.0, step=1),
    "ctrl_c_any during tools": dict(fault="ctrl_c_any", at=0.8, step=1),
    "ctrl_c_any at the final step end": dict(fault="ctrl_c_any", at=0.9, step=3),
    "tool raises": dict(fault=None, calls=("boom", "add", "boom")),
    "tool hangs": dict(fault=None, calls=("hang", "echo", "hang")),
    **{f"malformed json #{k}": dict(fault=None, calls=("malformed", "add"), malformed=k) for k in range(6)},
}


@pytest.mark.parametrize("variant", ["anthropic-stream", "openai-nostream"])
@pytest.mark.parametrize("case", list(CASES))
def test_each_fault_kind(rig: FaultRig, case: str, variant: str) -> None:
    provider, mode = variant.split("-")
    scenario = single_fault(provider=provider, stream=mode == "stream", **CASES[case])
    assert_ok(run_scenario(rig, scenario))


@pytest.mark.parametrize("variant", ["anthropic-nostream", "openai-stream"])
@pytest.mark.parametrize("case", ["http_529 surfaces", "drop mid-stream", "cancel mid-stream", "ctrl_c mid-stream",
                                  "ctrl_c_any during tools", "tool hangs"])
def test_each_fault_kind_other_modes(rig: FaultRig, case: str, variant: str) -> None:
    provider, mode = variant.split("-")
    assert_ok(run_scenario(rig, single_fault(provider=provider, stream=mode == "stream", **CASES[case])))


def test_faults_in_every_turn_and_the_data_dir_is_tmp_path(rig: FaultRig, tmp_path) -> None:
    turns = [
        [StepPlan(calls=["hang", "boom"], thinking=True, fault="http_429", count=1), StepPlan(calls=[], fault="drop", at=0.2)],
        [StepPlan(calls=["malformed"], thinking=True, redacted=True), StepPlan(calls=[], fault="ctrl_c", at=0.5)],
        [StepPlan(calls=["add"], fault="stream_error", at=0.6), StepPlan(calls=[])],
        [StepPlan(calls=["echo"], thinking=True), StepPlan(calls=[], thinking=True)],
    ]
    report = run_scenario(rig, Scenario("anthropic", True, True, turns), tmp_path)
    assert_ok(report)
    assert report.statuses == {"error": 2, "interrupted": 1, "completed": 2}  # + the healthy last turn
    assert (tmp_path / "events.sqlite").exists()


# ── the checks themselves catch what the APIs would reject ──────────────────────


def test_wire_checks_catch_unanswered_and_stray_tool_calls() -> None:
    use = {"type": "tool_use", "id": "t1", "name": "add", "input": {}}
    good = {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": "s"}, use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "2"},
                                     {"type": "text", "text": "more"}]},
    ]}
    assert anthropic_body_problems(good) == []
    unanswered = {"messages": [*good["messages"][:2], {"role": "user", "content": [{"type": "text", "text": "next"}]}]}
    assert anthropic_body_problems(unanswered)
    late = {"messages": [*good["messages"][:2], {"role": "user", "content": good["messages"][2]["content"][::-1]}]}
    assert any("not first" in p for p in anthropic_body_problems(late))
    unsigned = {"messages": [good["messages"][0], {"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}, use]},
                             good["messages"][2]]}
    assert any("signature" in p for p in anthropic_body_problems(unsigned))

    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    ok = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"},
                       {"role": "assistant", "content": None, "tool_calls": [call]},
                       {"role": "tool", "tool_call_id": "c1", "content": "2"}]}
    assert openai_body_problems(ok) == []
    assert openai_body_problems({"messages": ok["messages"][:3] + [{"role": "user", "content": "x"}]})
    assert openai_body_problems({"messages": ok["messages"] + [{"role": "tool", "tool_call_id": "c9", "content": "?"}]})


# ── Ctrl-C at every single event of a turn (scripted provider: exhaustive, fast) ──


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def _script(fail: bool) -> list:
    last = ({"error": {"kind": "overloaded", "message": "Overloaded", "status_code": 529}} if fail else
            {"text": "The answer is value of a.", "thinking": [{"text": "done", "signature": "sig-2"}]})
    return [
        {"text": "Looking.", "thinking": [{"text": "plan", "signature": "sig-1"}],
         "tool_calls": [{"name": "lookup", "arguments": {"key": "a"}, "id": "c1"},
                        {"name": "lookup", "arguments": {"key": "b"}, "id": "c2"}]},
        last,
    ]


@pytest.mark.parametrize("fail", [False, True], ids=["answer", "provider-error"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
def test_ctrl_c_at_every_event_leaves_a_consistent_turn(stream: bool, fail: bool) -> None:
    """A kernel interrupt can land anywhere; here it is raised from ``on_event`` at each
    event in turn. Found by the property run (fixed in harness.py): at the turn start it
    escaped ``run_turn``; after a complete reply (usage event, or a non-streamed answer
    being shown) the reply was dropped; during tools the finished calls were reported as
    "[not run]" and ended twice; at the final step end the log and the history disagreed."""

    def run(on_event):
        log = EventLog()
        harness = AgentHarness(ScriptedProvider(_script(fail)), AgentToolRegistry([lookup]), log, stream=stream)
        history = [{"role": "user", "content": "before"}, {"role": "assistant", "content": "earlier answer"}]
        log.append_messages("s", "t0", history)
        return harness.run_turn("s", history, "q", on_event=on_event), log

    seen: list = []
    plain, _ = run(seen.append)
    assert plain.status == ("error" if fail else "completed")
    for k in range(len(seen)):
        events: list = []

        def on_event(event, k=k):
            events.append(event)
            if len(events) == k + 1:
                raise KeyboardInterrupt

        result, log = run(on_event)  # never raises
        where = f"Ctrl-C at event {k} ({events[k].type})"
        want = plain.status if events[k].type in ("turn_end", "error") else "interrupted"
        assert result.status == want, where
        assert history_problems(result.messages, require_final_assistant=True) == [], where
        assert log.load_history("s") == result.messages, where
        assert log.turns("s")[0].status == want, where
        logged = log.events(turn_id=result.turn_id)
        assert logged[0].type == "turn_start" and logged[-1].type == "turn_end", where
        ends = [e for e in logged if e.type == "tool_call_end"]
        assert len({e.call_id for e in ends}) == len(ends), f"{where}: a tool call ended twice"
        status = {e.call_id: e.status for e in ends}
        for m in result.new_messages:
            if m["role"] == "tool":
                assert (status[m["tool_call_id"]] == "interrupted") == m["content"].startswith("[not run"), where
        for step in result.steps:  # every recorded reply is in the history
            assert any(m.get("role") == "assistant" and m.get("content", "").startswith(step.text)
                       for m in result.new_messages), where
        last_step = max((e.step for e in events if e.type == "step_start"), default=0)
        shown = "".join(e.text for e in events if e.type == "text_delta" and e.step == last_step)
        assert any(shown in m["content"] for m in result.new_messages if m["role"] == "assistant"), \
            f"{where}: the text the user saw is lost"
