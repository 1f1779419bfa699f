"""``ToolContext``: what a running tool tells its turn from its own thread (progress, server
log lines, model usage), the executor's cancellation of an abandoned call, and the emitter
keeping one order when events come from several threads."""

from __future__ import annotations

import contextvars
import threading

from jupyter_brain.agent.cost_caps import BudgetCaps
from jupyter_brain.agent.events import EventLog, ServerLog, ToolCallEnd, ToolProgress, UsageEvent
from jupyter_brain.agent.executor import BoundedToolExecutor, ToolTurnState
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tool_context import ToolContext, current_tool_context, running_turn
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.base import ToolCall
from jupyter_brain.providers.scripted import ScriptedProvider

CALLER = contextvars.ContextVar("caller", default="unset")


def test_the_call_runs_with_its_context_and_the_callers_context_variables():
    @tool
    def where() -> str:
        """Report the call's context."""
        context = current_tool_context()
        context.progress(1, 2, "half")
        return f"{context.call_id} {CALLER.get()} {threading.current_thread().name}"

    events = []
    executor = BoundedToolExecutor(AgentToolRegistry([where], permission_mode="auto"))
    CALLER.set("the turn")
    [outcome] = executor.execute([ToolCall(id="c7", name="where", arguments={})], ToolTurnState(),
                                 tool_context=lambda call: ToolContext(call.id, step=3, emit=events.append))
    assert outcome.output == "c7 the turn tool:where"  # on a worker thread, with the caller's variables
    assert [(e.call_id, e.step, e.progress, e.total, e.message) for e in events] == [("c7", 3, 1.0, 2.0, "half")]
    assert current_tool_context() is None  # nothing leaks to the caller


def test_an_abandoned_call_is_cancelled_and_its_late_reports_are_dropped():
    release, cancelled, reported = threading.Event(), threading.Event(), threading.Event()

    @tool(tool_timeout_s=0.2, retry_on_timeout=False)
    def stuck() -> str:
        """Wait until cancelled, then report anyway."""
        context = current_tool_context()
        context.on_cancel(cancelled.set)
        release.wait(60)
        context.progress(1, 1, "too late")
        context.log("srv", "info", "too late")
        reported.set()
        return "late"

    events = []
    executor = BoundedToolExecutor(AgentToolRegistry([stuck], permission_mode="auto"))
    [outcome] = executor.execute([ToolCall(id="c1", name="stuck", arguments={})], ToolTurnState(),
                                 tool_context=lambda call: ToolContext(call.id, emit=events.append))
    assert outcome.status == "timeout"
    assert cancelled.is_set()  # the executor told the call it gave up (an MCP client cancels its request)
    release.set()
    assert reported.wait(60)  # the abandoned call went on and reported after its end
    assert events == []


def test_a_callback_registered_after_the_cancel_runs_at_once():
    context = ToolContext("c")
    context.cancel()
    ran = []
    context.on_cancel(lambda: ran.append(1))
    assert ran == [1] and context.cancelled


def test_usage_a_tool_reports_counts_in_the_turn_and_its_cost_cap():
    @tool
    def ask_server() -> str:
        """A tool whose server asked the session's model (an MCP sampling request)."""
        current_tool_context().usage("fake", "fake-model", 4000, 500, 1.5, "sampling for MCP server 'x'")
        return "asked"

    bot = ScriptedProvider([
        {"text": "Asking.", "tool_calls": [{"name": "ask_server", "arguments": {}}]},
        "This answer costs too much to be asked for.",
    ])
    harness = AgentHarness(bot, AgentToolRegistry([ask_server], permission_mode="auto"), EventLog())
    result = harness.run_turn("s", [], "go", budget=BudgetCaps(max_cost=1.0))
    events = harness.event_log.events(turn_id=result.turn_id)
    [usage] = [e for e in events if isinstance(e, UsageEvent) and e.label]
    call_id = next(e.call_id for e in events if isinstance(e, ToolCallEnd))
    assert (usage.call_id, usage.input_tokens, usage.output_tokens, usage.cost_usd) == (call_id, 4000, 500, 1.5)
    assert result.input_tokens == sum(e.input_tokens for e in events if isinstance(e, UsageEvent))
    assert result.input_tokens >= 4000 and result.cost_usd is not None and result.cost_usd >= 1.5
    assert result.status == "budget"  # the sampling's cost crossed the cap: the next model call is not made


def test_log_lines_between_calls_reach_the_running_turn_only_while_it_runs():
    seen = []

    @tool
    def peek() -> str:
        """Send a line the way an MCP server's log arrives between calls."""
        running_turn()(ServerLog(server="srv", level="info", message="between calls"))
        return "ok"

    bot = ScriptedProvider([{"text": "", "tool_calls": [{"name": "peek", "arguments": {}}]}, "done"])
    harness = AgentHarness(bot, AgentToolRegistry([peek], permission_mode="auto"), EventLog())
    result = harness.run_turn("s", [], "go")
    seen = [e for e in harness.event_log.events(turn_id=result.turn_id) if isinstance(e, ServerLog)]
    assert [(e.server, e.message, e.turn_id) for e in seen] == [("srv", "between calls", result.turn_id)]
    assert running_turn() is None


def test_events_from_many_threads_keep_one_order():
    @tool
    def chatty(n: int) -> str:
        """Report progress n times."""
        context = current_tool_context()
        for i in range(n):
            context.progress(i, n)
        return "done"

    bot = ScriptedProvider([
        {"text": "", "tool_calls": [{"name": "chatty", "arguments": {"n": 200}} for _ in range(4)]},
        "done",
    ])
    harness = AgentHarness(bot, AgentToolRegistry([chatty], permission_mode="auto"), EventLog())
    result = harness.run_turn("s", [], "go")
    events = harness.event_log.events(turn_id=result.turn_id)
    assert [e.seq for e in events] == list(range(len(events)))
    assert len([e for e in events if isinstance(e, ToolProgress)]) == 800


def test_time_spent_waiting_for_the_user_does_not_count_against_the_tools_timeout():
    """A server's sampling request waits for the user's approval inside a tool call: that
    wait (here five times the tool's timeout) must not make the executor abandon the call."""
    asking, answered = threading.Event(), threading.Event()

    @tool(tool_timeout_s=1.0, retry_on_timeout=False)
    def asks_the_user() -> str:
        """Wait for the user's answer inside the call."""
        with current_tool_context().waiting_for_user():
            asking.set()
            assert answered.wait(60)
        return "approved"

    def user() -> None:
        asking.wait(60)
        threading.Event().wait(5.0)  # the user takes their time (not time.sleep: faketime pass)
        answered.set()

    threading.Thread(target=user, daemon=True).start()
    executor = BoundedToolExecutor(AgentToolRegistry([asks_the_user], permission_mode="auto"))
    [outcome] = executor.execute([ToolCall(id="c1", name="asks_the_user", arguments={})], ToolTurnState(),
                                 tool_context=lambda call: ToolContext(call.id))
    assert (outcome.status, outcome.output) == ("ok", "approved")


def test_waited_time_adds_up_and_nests():
    context = ToolContext("c")
    assert context.waited_s() == 0.0 and not context.waiting
    with context.waiting_for_user():
        with context.waiting_for_user():
            assert context.waiting
        assert context.waiting
        threading.Event().wait(0.01)
    first = context.waited_s()
    assert first > 0 and not context.waiting
    assert context.waited_s() == first  # the clock stops when nobody is asked


def test_time_spent_waiting_for_the_user_does_not_count_against_the_turns_deadline():
    """As for a tool's own approval (``TurnBudget.extend``): a sampling approval inside a tool
    call that outlasts the turn's whole deadline leaves the turn to finish its work."""
    asking, answered = threading.Event(), threading.Event()

    @tool(retry_on_timeout=False)
    def asks_the_user() -> str:
        """Wait for the user's answer inside the call."""
        with current_tool_context().waiting_for_user():
            asking.set()
            assert answered.wait(60)
        return "approved"

    def user() -> None:
        asking.wait(60)
        threading.Event().wait(5.0)  # longer than the turn's 2 s (not time.sleep: faketime pass)
        answered.set()

    threading.Thread(target=user, daemon=True).start()
    bot = ScriptedProvider([{"text": "", "tool_calls": [{"name": "asks_the_user", "arguments": {}}]}, "Done."])
    harness = AgentHarness(bot, AgentToolRegistry([asks_the_user], permission_mode="auto"), EventLog(), timeout_s=2)
    result = harness.run_turn("s", [], "go")
    assert [(c.name, c.status) for c in result.tool_calls] == [("asks_the_user", "ok")]
    assert (result.status, result.text) == ("completed", "Done.")
