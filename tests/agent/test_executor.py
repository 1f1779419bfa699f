"""BoundedToolExecutor: gates, repair, approval, timeouts, parallel waves, artifacts.

Concurrency is checked with events (two tools that each wait for the other succeed only
when they run at the same time), never with wall-clock assertions. Timeouts are made
deterministic by ``settled``: a call times out only when its tool is blocked, never
because its worker thread had not been scheduled yet.
"""

from __future__ import annotations

import threading
import time

import pytest

from jupyter_brain.agent import executor as executor_module
from jupyter_brain.agent import tool_workers
from jupyter_brain.agent.artifacts import ArtifactStore, artifact_tool
from jupyter_brain.agent.budget import TurnBudget
from jupyter_brain.agent.executor import MAX_REPAIR_ATTEMPTS, BoundedToolExecutor, ToolOutcome, ToolTurnState
from jupyter_brain.agent.tools import AgentToolRegistry, NonRetryableToolError, ToolError, tool
from jupyter_brain.providers.base import ToolCall

_ids = iter(range(1, 10_000))


def call(name: str, args=None, *, id: str | None = None, raw: str | None = None) -> ToolCall:
    return ToolCall(id=id or f"c{next(_ids)}", name=name, arguments={} if args is None else args, raw_arguments=raw)


def make(tools, mode="auto", **kw):
    reg = AgentToolRegistry(tools, permission_mode=mode)
    return BoundedToolExecutor(reg, **kw), ToolTurnState()


@tool
def echo(text: str, times: int = 1) -> str:
    """Echo."""
    return text * times


@tool(effect="write")
def save(path: str) -> str:
    """Save."""
    return f"saved {path}"


@tool(effect="execute")
def run(code: str) -> str:
    """Run."""
    return f"ran {code}"


@pytest.fixture
def release():
    """An event the hanging tools wait on; set at teardown so no thread outlives the test."""
    ev = threading.Event()
    yield ev
    ev.set()


class SettledWaits:
    """The executor's wait on a tool call, made deterministic: it returns only once the call
    has finished or its tool is blocked in ``block()`` (until the test ends), then waits as
    usual. The time it waited in vain passes on ``clock`` too (for a ``TurnBudget``)."""

    def __init__(self, release: threading.Event, wait, execute) -> None:
        self._release = release
        self._wait, self._execute = wait, execute
        self._changed = threading.Condition()
        self._blocked: set[int] = set()  # worker threads blocked in a tool
        self._worker: dict[int, int] = {}  # id(run) -> the worker thread running it
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def block(self) -> None:
        """Called by a tool: block until the test is over."""
        me = threading.get_ident()
        with self._changed:
            self._blocked.add(me)
            self._changed.notify_all()
        try:
            self._release.wait(60)
        finally:
            with self._changed:
                self._blocked.discard(me)

    def execute(self, run) -> None:
        with self._changed:
            self._worker[id(run)] = threading.get_ident()
        try:
            self._execute(run)
        finally:
            with self._changed:
                self._changed.notify_all()

    def wait(self, run, timeout: float) -> bool:
        with self._changed:
            settled = self._changed.wait_for(
                lambda: self._wait(run, 0) or self._worker.get(id(run)) in self._blocked, timeout=60)
        assert settled, "the tool neither returned nor blocked"
        finished = self._wait(run, timeout)
        if not finished:
            self.now += max(0.0, timeout)
        return finished


@pytest.fixture
def settled(monkeypatch, release):
    waits = SettledWaits(release, executor_module._Run.wait, executor_module._Run.execute)
    monkeypatch.setattr(executor_module._Run, "wait", lambda run, timeout: waits.wait(run, timeout))
    monkeypatch.setattr(executor_module._Run, "execute", lambda run: waits.execute(run))
    return waits


# ── gates ────────────────────────────────────────────────────────────────────


def test_ok_call_and_outcome_fields():
    ex, state = make([echo])
    (o,) = ex.execute([call("echo", {"text": "ab", "times": 2}, id="x1")], state)
    assert o.status == "ok" and o.output == "abab" and not o.is_error
    assert o.call.id == "x1" and o.arguments == {"text": "ab", "times": 2}
    assert o.repaired is False and o.repair_notes == [] and o.artifact is None and o.error is None
    assert o.wave == 1 and o.duration_ms >= 0
    assert o.to_message() == {"role": "tool", "tool_call_id": "x1", "name": "echo", "content": "abab", "is_error": False}
    assert state.results == [{"name": "echo", "status": "ok", "output": "abab"}]


def test_unknown_tool():
    ex, state = make([echo, save])
    (o,) = ex.execute([call("nope")], state)
    assert o.status == "invalid" and o.is_error
    assert "Unknown tool 'nope'" in o.output and "echo, save" in o.output
    assert o.to_message()["is_error"] is True


def test_unknown_tool_with_empty_registry():
    ex, state = make([])
    (o,) = ex.execute([call("x")], state)
    assert "(none)" in o.output


def test_retryable_tool_error_does_not_block():
    n = []

    @tool
    def flaky() -> str:
        """F."""
        n.append(1)
        raise ToolError("try again later")

    ex, state = make([flaky])
    (o,) = ex.execute([call("flaky")], state)
    assert o.status == "error" and o.output == "Tool 'flaky' failed: try again later"
    assert o.blocks_tool is False and state.blocked == {}
    (o2,) = ex.execute([call("flaky")], state)
    assert o2.status == "error" and len(n) == 2


def test_non_retryable_error_blocks_for_the_turn():
    n = []

    @tool
    def gone() -> str:
        """G."""
        n.append(1)
        raise NonRetryableToolError("the database is gone")

    ex, state = make([gone, echo])
    (o,) = ex.execute([call("gone")], state)
    assert o.status == "error" and o.blocks_tool
    assert "the database is gone" in o.output
    assert "gone" in state.blocked
    o2, o3 = ex.execute([call("gone"), call("echo", {"text": "still fine"})], state)
    assert o2.status == "blocked" and "blocked for the rest of this turn" in o2.output
    assert "the database is gone" in o2.output
    assert o3.status == "ok"
    assert len(n) == 1  # the blocked call never ran
    # a new turn (fresh state) may use it again
    (o4,) = ex.execute([call("gone")], ToolTurnState())
    assert o4.status == "error"


def test_raising_tool_never_breaks():
    @tool
    def divide(a: int, b: int) -> float:
        """D."""
        return a / b

    ex, state = make([divide])
    (o,) = ex.execute([call("divide", {"a": 1, "b": 0})], state)
    assert o.status == "error"
    assert o.output.startswith("Tool 'divide' failed: ZeroDivisionError: division by zero")
    assert "at divide, line" in o.output
    assert "ZeroDivisionError" in o.error
    assert not o.blocks_tool


def test_base_exceptions_in_tools_are_contained():
    @tool
    def exits() -> None:
        """E."""
        raise SystemExit(3)

    ex, state = make([exits])
    (o,) = ex.execute([call("exits")], state)
    assert o.status == "error" and "SystemExit" in o.output


def test_read_only_denies_write_and_execute():
    ran = []

    @tool(effect="write")
    def w() -> str:
        """W."""
        ran.append(1)
        return "x"

    ex, state = make([echo, w, run], mode="read-only")
    o1, o2, o3 = ex.execute([call("echo", {"text": "a"}), call("w"), call("run", {"code": "1"})], state)
    assert o1.status == "ok"
    assert o2.status == "denied" and "Permission denied" in o2.output and "read-only" in o2.output
    assert "writes files" in o2.output
    assert o3.status == "denied" and "executes code" in o3.output
    assert ran == []


def test_denied_by_override_in_auto_mode():
    ex, state = make([echo, run])
    ex.registry.deny("echo")
    o1, o2 = ex.execute([call("echo", {"text": "a"}), call("run", {"code": "1"})], state)
    assert (o1.status, o2.status) == ("denied", "ok")


def test_ask_without_approver_is_denied():
    ex, state = make([run, echo], mode="ask")
    o1, o2 = ex.execute([call("run", {"code": "1"}), call("echo", {"text": "a"})], state)
    assert o1.status == "denied" and "approval" in o1.output
    assert o1.error == "no approver"
    assert o2.status == "ok"  # reads never ask


@pytest.mark.parametrize(
    ("answer", "status", "text"),
    [(True, "ok", "ran 1"), (False, "denied", "the user denied this call"), ("raise", "denied", "approval failed: no UI")],
)
def test_approver(answer, status, text):
    seen = []

    def approver(c, spec, args):
        seen.append((c.name, spec.name, args))
        if answer == "raise":
            raise RuntimeError("no UI")
        return answer

    ex, state = make([run, echo], mode="ask", approver=approver)
    o, r = ex.execute([call("run", {"code": "1"}), call("echo", {"text": "a"})], state)
    assert o.status == status and text in o.output
    assert r.status == "ok"
    assert seen == [("run", "run", {"code": "1"})]  # only the gated tool was asked about


def test_approver_sees_repaired_arguments_and_allowed_tools_skip_it():
    seen = []
    ex, state = make([run], mode="ask", approver=lambda c, s, a: seen.append(a) or True)
    ex.execute([call("run", {"input": {"code": "x"}})], state)
    assert seen == [{"code": "x"}]
    ex.registry.allow("run")
    ex.execute([call("run", {"code": "y"})], state)
    assert len(seen) == 1


# ── validation and repair ────────────────────────────────────────────────────


def test_repair_sets_flag_and_notes_and_runs_with_fixed_args():
    ex, state = make([echo])
    (o,) = ex.execute([call("echo", {"Text": "ab", "times": "3.0"})], state)
    assert o.status == "ok" and o.output == "ababab"
    assert o.repaired is True
    assert "renamed 'Text' to 'text'" in o.repair_notes
    assert "converted 'times' to a number" in o.repair_notes
    assert o.arguments == {"text": "ab", "times": 3}


def test_malformed_raw_json_repaired():
    ex, state = make([echo])
    (o,) = ex.execute([call("echo", {}, raw='{"text": "hi",}')], state)
    assert o.status == "ok" and o.output == "hi" and o.repaired
    assert "parsed malformed argument JSON" in o.repair_notes


def test_malformed_raw_json_unrepairable():
    ex, state = make([echo])
    (o,) = ex.execute([call("echo", {}, raw='{"text": "hi')], state)
    assert o.status == "invalid"
    assert "not valid JSON" in o.output and "Send a JSON object" in o.output


def test_invalid_arguments_precise_error():
    ex, state = make([echo])
    (o,) = ex.execute([call("echo", {"times": "many"})], state)
    assert o.status == "invalid" and o.error == "invalid arguments"
    assert "Invalid arguments for tool 'echo'" in o.output
    assert "'text' is required but was not given" in o.output
    assert "'times'" in o.output and "many" in o.output
    assert state.invalid_attempts == {"echo": 1}


def test_max_repair_attempts_then_blocked():
    assert MAX_REPAIR_ATTEMPTS == BoundedToolExecutor.MAX_REPAIR_ATTEMPTS == 3
    ex, state = make([echo])
    statuses = []
    for _ in range(MAX_REPAIR_ATTEMPTS):
        (o,) = ex.execute([call("echo", {})], state)
        statuses.append(o.status)
    assert statuses == ["invalid"] * 3
    assert "now blocked" in o.output
    (o,) = ex.execute([call("echo", {"text": "now valid"})], state)
    assert o.status == "blocked"


def test_invalid_attempts_are_per_tool():
    ex, state = make([echo, run])
    for _ in range(2):
        ex.execute([call("echo", {}), call("run", {})], state)
    o1, o2 = ex.execute([call("echo", {"text": "a"}), call("run", {"code": "1"})], state)
    assert (o1.status, o2.status) == ("ok", "ok")


def test_validation_disabled_passes_arguments_through():
    seen = []

    @tool
    def anything(x: int = 0) -> str:
        """A."""
        seen.append(x)
        return "done"

    ex, state = make([anything], enable_validation=False)
    (o,) = ex.execute([call("anything", {"x": "not-an-int"})], state)
    assert o.status == "ok" and seen == ["not-an-int"]


# ── timeouts ─────────────────────────────────────────────────────────────────


def hanging_tool(settled, invocations, *, retry: bool, succeed_on: int | None = None):
    @tool(tool_timeout_s=0.2, retry_on_timeout=retry)
    def hang() -> str:
        """H."""
        invocations.append(1)
        if succeed_on is not None and len(invocations) >= succeed_on:
            return "finally"
        settled.block()
        return "late"

    return hang


def test_timeout_retries_once_then_blocks(settled):
    invocations = []
    ex, state = make([hanging_tool(settled, invocations, retry=True)])
    (o,) = ex.execute([call("hang")], state)
    assert o.status == "timeout"
    assert len(invocations) == 2
    assert "timed out after 0.2s (retried once)" in o.output
    assert "hang" in state.blocked
    (o2,) = ex.execute([call("hang")], state)
    assert o2.status == "blocked" and len(invocations) == 2


def test_timeout_without_retry(settled):
    invocations = []
    ex, state = make([hanging_tool(settled, invocations, retry=False)])
    (o,) = ex.execute([call("hang")], state)
    assert o.status == "timeout" and len(invocations) == 1
    assert "timed out after 0.2s" in o.output and "retried" not in o.output


def test_retry_after_timeout_can_succeed(settled):
    invocations = []
    ex, state = make([hanging_tool(settled, invocations, retry=True, succeed_on=2)])
    (o,) = ex.execute([call("hang")], state)
    assert o.status == "ok" and o.output == "finally"
    assert len(invocations) == 2 and state.blocked == {}


def test_deadline_caps_tool_timeout(settled):
    invocations = []

    @tool(tool_timeout_s=45, retry_on_timeout=True)
    def slow() -> str:
        """S."""
        invocations.append(1)
        settled.block()
        return "late"

    budget = TurnBudget(timeout_s=0.3, clock=settled.clock)  # the executor's wait uses up the turn's 0.3 s
    ex, state = make([slow])
    (o,) = ex.execute([call("slow")], state, remaining_s=budget.remaining_s)
    assert o.status == "timeout"
    assert "deadline" in o.output
    assert len(invocations) == 1  # no retry once the turn's time is up


def test_expired_deadline_does_not_wait(settled):
    invocations = []

    @tool(tool_timeout_s=45)
    def slow() -> str:
        """S."""
        invocations.append(1)
        settled.block()
        return "late"

    ex, state = make([slow])
    (o,) = ex.execute([call("slow")], state, remaining_s=lambda: 0.0)
    assert o.status == "timeout" and "deadline" in o.output


# ── waves ────────────────────────────────────────────────────────────────────


def test_plan_waves():
    @tool
    def r() -> None:
        """R."""

    ex, _ = make([r, save, run])
    calls = [call("r"), call("r"), call("save", {"path": "a"}), call("r"), call("r"), call("r"), call("run"), call("nope"), call("r")]
    waves = ex.plan_waves(calls)
    assert [[c.name for c in w] for w in waves] == [["r", "r"], ["save"], ["r", "r", "r"], ["run"], ["nope"], ["r"]]
    ex.parallel_enabled = False
    assert all(len(w) == 1 for w in ex.plan_waves(calls))


def rendezvous_tools(wait_s: float):
    """Two read tools that each announce themselves and wait for the other."""
    a_in, b_in = threading.Event(), threading.Event()

    @tool
    def tool_a() -> str:
        """A."""
        a_in.set()
        return "together" if b_in.wait(wait_s) else "alone"

    @tool
    def tool_b() -> str:
        """B."""
        b_in.set()
        return "together" if a_in.wait(wait_s) else "alone"

    return tool_a, tool_b


def test_read_tools_in_one_wave_run_concurrently():
    a, b = rendezvous_tools(30)  # a bound on the wait only: together, they meet at once
    ex, state = make([a, b])
    o1, o2 = ex.execute([call("tool_a"), call("tool_b")], state)
    assert (o1.output, o2.output) == ("together", "together")
    assert o1.wave == o2.wave == 1 and state.waves == 1


def test_parallel_disabled_runs_each_alone():
    a, b = rendezvous_tools(0.3)
    ex, state = make([a, b], parallel_enabled=False)
    o1, o2 = ex.execute([call("tool_a"), call("tool_b")], state)
    assert o1.output == "alone"  # tool_b had not started while tool_a ran
    assert o2.output == "together"  # tool_a had already run
    assert (o1.wave, o2.wave) == (1, 2)


def test_write_and_execute_tools_run_alone_and_in_order():
    log: list[str] = []
    lock = threading.Lock()
    second_started = threading.Event()

    @tool(effect="write")
    def first() -> str:
        """1."""
        with lock:
            log.append("first:start")
        overlapped = second_started.wait(0.3)
        with lock:
            log.append("first:end")
        return "overlap" if overlapped else "alone"

    @tool(effect="execute")
    def second() -> str:
        """2."""
        second_started.set()
        with lock:
            log.append("second:start")
            log.append("second:end")
        return "ok"

    ex, state = make([first, second])
    o1, o2 = ex.execute([call("first"), call("second")], state)
    assert o1.output == "alone"
    assert log == ["first:start", "first:end", "second:start", "second:end"]
    assert (o1.wave, o2.wave) == (1, 2)


def test_outcome_order_is_call_order():
    # the second read finishes first; the write runs in its own wave afterwards
    b_done = threading.Event()

    @tool
    def slow_read() -> str:
        """S."""
        b_done.wait(5)
        return "slow"

    @tool
    def fast_read() -> str:
        """F."""
        b_done.set()
        return "fast"

    finished = []
    ex, state = make([slow_read, fast_read, save])
    calls = [call("slow_read"), call("fast_read"), call("save", {"path": "p"}), call("nope")]
    outcomes = ex.execute(calls, state, on_end=lambda o: finished.append(o.call.name))
    assert [o.call.id for o in outcomes] == [c.id for c in calls]
    assert [o.output for o in outcomes[:3]] == ["slow", "fast", "saved p"]
    assert [o.wave for o in outcomes] == [1, 1, 2, 3]
    assert finished[-2:] == ["save", "nope"]


def test_duplicate_call_ids_keep_every_outcome():
    ex, state = make([echo])
    calls = [call("echo", {"text": "one"}, id="dup"), call("echo", {"text": "two"}, id="dup")]
    outcomes = ex.execute(calls, state)
    assert [o.output for o in outcomes] == ["one", "two"]


def test_cancelled_marks_calls_interrupted():
    ran = []

    @tool
    def r() -> str:
        """R."""
        ran.append(1)
        return "x"

    ex, state = make([r, save])
    outcomes = ex.execute([call("r"), call("save", {"path": "a"})], state, cancelled=lambda: True)
    assert [o.status for o in outcomes] == ["interrupted", "interrupted"]
    assert ran == []


def test_cancel_between_waves():
    flag = {"cancel": False}

    @tool(effect="write")
    def w1() -> str:
        """W."""
        flag["cancel"] = True
        return "done"

    ex, state = make([w1, save])
    o1, o2 = ex.execute([call("w1"), call("save", {"path": "a"})], state, cancelled=lambda: flag["cancel"])
    assert (o1.status, o2.status) == ("ok", "interrupted")


# ── callbacks ────────────────────────────────────────────────────────────────


def test_on_start_and_on_end_callbacks():
    starts, ends = [], []
    ex, state = make([echo, run], mode="read-only")
    calls = [call("echo", {"text": "a", "times": "2"}), call("run", {"code": "x"}), call("nope", {"q": 1})]
    ex.execute(
        calls,
        state,
        on_start=lambda c, wave, args, repaired, notes: starts.append((c.name, wave, args, repaired, notes)),
        on_end=lambda o: ends.append((o.call.name, o.status)),
    )
    assert starts[0] == ("echo", 1, {"text": "a", "times": "2"}, False, [])  # pydantic accepts "2"
    assert starts[1] == ("run", 2, {"code": "x"}, False, [])
    assert starts[2] == ("nope", 3, {"q": 1}, False, [])
    assert sorted(ends) == sorted([("echo", "ok"), ("run", "denied"), ("nope", "invalid")])
    assert [r["status"] for r in state.results] == [s for _, s in ends]


def test_on_start_reports_repair():
    starts = []
    ex, state = make([echo])
    ex.execute([call("echo", {"input": {"text": "a"}})], state, on_start=lambda *a: starts.append(a))
    (_, _, args, repaired, notes), = starts
    assert args == {"text": "a"} and repaired is True and notes == ["unwrapped arguments from 'input'"]


# ── large output → artifact ──────────────────────────────────────────────────


def test_large_output_goes_to_artifact_and_reads_back():
    big = "".join(f"line {i:05d}\n" for i in range(2000))  # 22,000 chars
    assert len(big) > 12_000

    @tool
    def dump() -> str:
        """D."""
        return big

    store = ArtifactStore()
    ex, state = make([dump, artifact_tool(store)], artifacts=store)
    (o,) = ex.execute([call("dump")], state)
    assert o.status == "ok" and o.artifact is not None
    assert len(o.output) < 12_000
    assert o.output.startswith(big[:2000])
    assert o.artifact in o.output and "read_artifact" in o.output
    assert "22,000 characters" in o.output
    assert store.get(o.artifact) == big
    (r,) = ex.execute([call("read_artifact", {"handle": o.artifact, "offset": 2000, "length": 100})], state)
    assert r.status == "ok" and r.output.startswith(big[2000:2100])
    assert "more characters" in r.output
    (whole,) = ex.execute([call("read_artifact", {"handle": o.artifact, "offset": 12_000, "length": 10_000})], state)
    assert whole.output == big[12_000:]  # the tail, no "more" note


def test_output_at_the_limit_stays_inline():
    @tool
    def exact() -> str:
        """E."""
        return "x" * 12_000

    ex, state = make([exact])
    (o,) = ex.execute([call("exact")], state)
    assert o.artifact is None and o.output == "x" * 12_000


def test_read_artifact_unknown_handle_is_an_error():
    store = ArtifactStore()
    ex, state = make([artifact_tool(store)], artifacts=store)
    (o,) = ex.execute([call("read_artifact", {"handle": "art_0000"})], state)
    assert o.status == "error" and "no artifact" in o.output
    (o,) = ex.execute([call("read_artifact", {"handle": "../etc/passwd"})], state)
    assert o.status == "error" and "not an artifact handle" in o.output


def test_artifact_store_on_disk(tmp_path):
    store = ArtifactStore(tmp_path / "artifacts")
    shown, handle = store.offload("y" * 20, limit=10)
    assert handle and (tmp_path / "artifacts" / f"{handle}.txt").read_text() == "y" * 20
    assert ArtifactStore(tmp_path / "artifacts").get(handle) == "y" * 20
    assert store.offload("short", limit=10) == ("short", None)


def test_non_string_output_is_json():
    @tool
    def stats() -> dict:
        """S."""
        return {"mean": 1.5, "n": 3}

    ex, state = make([stats])
    (o,) = ex.execute([call("stats")], state)
    assert o.output == '{"mean": 1.5, "n": 3}'


def test_results_feed_is_clipped():
    @tool
    def long() -> str:
        """L."""
        return "z" * 3000

    ex, state = make([long])
    ex.execute([call("long")], state)
    assert len(state.results[0]["output"]) == 500


def test_tool_outcome_is_error_property():
    c = call("x")
    assert not ToolOutcome(c, "ok", "").is_error
    for status in ("error", "timeout", "denied", "blocked", "invalid", "interrupted"):
        assert ToolOutcome(c, status, "").is_error


def test_same_call_object_twice():
    ex, state = make([echo])
    c = call("echo", {"text": "again"})
    assert [o.output for o in ex.execute([c, c], state)] == ["again", "again"]


def test_read_artifact_clamps_offset_and_length():
    store = ArtifactStore()
    handle = store.put("abcdefghij" * 2000)  # 20,000 chars
    read = artifact_tool(store)
    assert read(handle, offset=-5, length=3).startswith("abc\n[19,997 more characters after offset 3]")
    part = read(handle, offset=0, length=50_000)
    assert part.startswith("abcdefghij" * 1000) and "[10,000 more characters after offset 10000]" in part
    assert read(handle, offset=25_000) == ""


def test_hung_tool_does_not_hold_up_later_calls(settled):
    """A worker stuck in a hung tool is abandoned; the next call gets another worker."""
    invocations = []

    @tool
    def quick() -> str:
        """Q."""
        return "quick"

    ex, state = make([hanging_tool(settled, invocations, retry=False), quick])
    (hung,) = ex.execute([call("hang")], state)
    assert hung.status == "timeout"
    outcomes = ex.execute([call("quick"), call("quick")], state)
    assert [o.output for o in outcomes] == ["quick", "quick"]
    assert len(invocations) == 1  # still hung until the fixture releases it


def test_tool_workers_are_reused(monkeypatch):
    pool = tool_workers.Workers()  # this test's own: no idle (or hung) workers of other tests
    monkeypatch.setattr(tool_workers, "WORKERS", pool)
    threads = []  # strong references: distinct thread objects stay distinct

    @tool
    def who() -> str:
        """W."""
        threads.append(threading.current_thread())
        return "ok"

    ex, state = make([who])
    for _ in range(5):
        ex.execute([call("who")], state)
        # The call returns with its tool; the worker is back in the pool a moment later.
        assert _eventually(lambda: len(pool._idle) == 1)
    assert len({id(t) for t in threads}) == 1  # one worker served all five calls


def _eventually(condition, within_s: float = 60.0) -> bool:
    """Poll ``condition``; the bound only keeps a broken behaviour from hanging the test."""
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() >= deadline:
            return bool(condition())
        threading.Event().wait(0.005)  # not time.sleep: EINVAL under scripts/test.sh's faketime pass
    return True
