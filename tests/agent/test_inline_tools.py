"""Tools marked ``inline``: run on the caller's thread, otherwise handled like any tool.

An inline call is validated, gated, approved and artifact-limited as before; what it
raises is its result; Ctrl-C inside it ends the turn "interrupted" with a valid history.
"""

from __future__ import annotations

import threading

from jupyter_brain.agent.artifacts import ArtifactStore, artifact_tool
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.executor import BoundedToolExecutor, ToolTurnState
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.history import history_problems
from jupyter_brain.agent.tools import AgentToolRegistry, NonRetryableToolError, tool
from jupyter_brain.providers.base import ToolCall
from jupyter_brain.providers.scripted import ScriptedProvider

_ids = iter(range(1, 10_000))


def call(name: str, args=None) -> ToolCall:
    return ToolCall(id=f"i{next(_ids)}", name=name, arguments={} if args is None else args)


def make(tools, mode="auto", **kw):
    return BoundedToolExecutor(AgentToolRegistry(tools, permission_mode=mode), **kw), ToolTurnState()



threads: dict[str, threading.Thread] = {}


@tool(inline=True)
def here(text: str) -> str:
    """Records the thread it runs on."""
    threads[text] = threading.current_thread()
    return text.upper()


@tool
def away(text: str) -> str:
    """Records the thread it runs on (a worker)."""
    threads[text] = threading.current_thread()
    return text


def test_inline_is_opt_in_metadata():
    assert here.inline and here.metadata["inline"] is True
    assert not away.inline and "inline" not in away.metadata
    assert artifact_tool(ArtifactStore()).inline  # read_artifact: a dict lookup or a local read


def test_inline_runs_on_the_callers_thread_and_keeps_call_order():
    threads.clear()
    ex, state = make([here, away])
    outcomes = ex.execute([call("away", {"text": "a"}), call("here", {"text": "b"}), call("away", {"text": "c"})],
                          state)
    assert [o.output for o in outcomes] == ["a", "B", "c"]
    assert [o.status for o in outcomes] == ["ok"] * 3
    assert threads["b"] is threading.current_thread()
    assert threads["a"] is not threading.current_thread() and threads["c"] is not threading.current_thread()


def test_inline_arguments_are_validated_and_repaired_like_any_tool():
    ex, state = make([here, away])
    for args in ({"txt": "x"}, {"text": 5}, {"text": "x", "extra": 1}, '{"text": "y"}'):
        inline, worker = ex.execute([call("here", args), call("away", args)], state)
        assert (inline.status, inline.repaired) == (worker.status, worker.repaired), args
    (bad,) = ex.execute([call("here", {"txt": "x"})], state)
    assert bad.status == "invalid" and "text" in bad.output


def test_inline_tool_that_raises_is_an_error_for_the_model():
    @tool(inline=True)
    def broken(x: int) -> str:
        """Fails."""
        raise ValueError("bad value")

    @tool(inline=True)
    def gone() -> str:
        """Fails for good."""
        raise NonRetryableToolError("the service is gone")

    ex, state = make([broken, gone])
    (o,) = ex.execute([call("broken", {"x": 1})], state)
    assert o.status == "error" and o.is_error
    assert "ValueError: bad value" in o.output and "(at broken, line" in o.output
    (g,) = ex.execute([call("gone")], state)
    assert g.status == "error" and g.blocks_tool and "gone" in state.blocked
    (again,) = ex.execute([call("gone")], state)
    assert again.status == "blocked"


def test_inline_tool_huge_output_becomes_an_artifact():
    store = ArtifactStore()

    @tool(inline=True)
    def dump() -> str:
        """Big."""
        return "x" * 30_000

    ex, state = make([dump, artifact_tool(store)], artifacts=store, output_limit=12_000)
    (o,) = ex.execute([call("dump")], state)
    assert o.status == "ok" and o.artifact is not None and len(o.output) < 12_000
    (r,) = ex.execute([call("read_artifact", {"handle": o.artifact, "offset": 29_990, "length": 50})], state)
    assert r.status == "ok" and r.output == "x" * 10


def test_inline_tool_still_needs_approval():
    ran = []

    @tool(effect="execute", inline=True)
    def act() -> str:
        """Acts."""
        ran.append(1)
        return "done"

    ex, state = make([act], mode="ask", approver=lambda c, s, a: False)
    (o,) = ex.execute([call("act")], state)
    assert o.status == "denied" and not ran
    ex, state = make([act], mode="read-only")
    (o,) = ex.execute([call("act")], state)
    assert o.status == "denied" and not ran


def test_ctrl_c_inside_an_inline_tool_interrupts_the_turn_with_a_valid_history():
    @tool(inline=True, parallel_safe=False)  # a wave of its own: the call before it finishes first
    def stop() -> str:
        """Ctrl-C arrives while this runs."""
        raise KeyboardInterrupt

    @tool(inline=True)
    def fine() -> str:
        """Returns."""
        return "fine"

    log = EventLog(":memory:")
    provider = ScriptedProvider([
        {"text": "", "tool_calls": [{"name": "fine", "arguments": {}}, {"name": "stop", "arguments": {}},
                                    {"name": "fine", "arguments": {}}]},
        "never reached",
    ])
    harness = AgentHarness(provider, AgentToolRegistry([stop, fine]), log)
    result = harness.run_turn("s", [], "q")
    assert result.status == "interrupted"
    assert history_problems(result.messages, require_final_assistant=True) == []
    tool_msgs = [m for m in result.messages if m["role"] == "tool"]
    assert [m["content"].startswith("[not run") for m in tool_msgs] == [False, True, True]
    ends = {e.call_id: e.status for e in log.events(turn_id=result.turn_id) if e.type == "tool_call_end"}
    assert sorted(ends.values()) == ["interrupted", "interrupted", "ok"]
    assert tool_msgs[0]["content"] == "fine"
    assert log.turns("s")[0].status == "interrupted"
    assert log.load_history("s") == result.messages
    # The session goes on: the next turn runs normally.
    provider2 = ScriptedProvider(["all good"])
    again = AgentHarness(provider2, AgentToolRegistry([stop, fine]), log).run_turn("s", result.messages, "next")
    assert again.status == "completed" and again.text == "all good"
