"""Harness overhead per step, with the model and the tool taking no time at all — ours
beside smolagents' ``ToolCallingAgent`` on the same scripted work, in the same run.

Each step: one scripted model call that asks for one tool call, the tool runs; the last
step answers. Ours logs every event to a SQLite file (the turn's end waits until it is
committed, so the log is inside the measured time). Ours runs a tool on a worker thread by
default (so a hung tool can be timed out); the "inline" column is the same work with the
tool marked ``@tool(inline=True)`` (run on the agent's thread, no timeout: for tools that
are fast and cannot block, like ``read_artifact``). Both are printed, each with its verdict.
What is left of the wall time is the framework's own cost: wall time of the run / steps,
nothing subtracted. Both scripted models return precomputed replies (no tokenising, no
message conversion, no sleeping).

Goals: ours <= 1/3 of smolagents' per step, flat from N=20 to N=200 (issue #11); and
ours <= 0.3 ms per step. Prints figures; asserts nothing.

The run also prints what one bare hand-off to a waiting thread and back costs on this
machine: "ours" minus "ours inline" is mostly that. Two thread wake-ups that cross CPUs
are expensive in a virtual machine (the idle vCPU has to be woken); ``--one-cpu`` runs
everything (both frameworks, all their threads) on one CPU, where they are not.

    python benchmarks/overhead.py [--repeats 5] [--one-cpu]

smolagents is optional (``pip install -e .[bench]``); without it only ours is printed.
"""

from __future__ import annotations

import argparse
import gc
import os
import queue
import statistics
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.base import ProviderResult, ToolCall, Usage

SIZES = (20, 50, 100, 200)
RATIO_GOAL = 1 / 3
FLAT_TOLERANCE = 1.3  # "flat": the largest median ms/step across N is at most 1.3x the smallest
ABSOLUTE_GOAL_MS = 0.3


@tool
def noop(i: int) -> str:
    """Does nothing."""
    return "ok"


@tool(name="noop", inline=True)
def noop_inline(i: int) -> str:
    """Does nothing."""
    return "ok"


class InstantProvider:
    """Returns precomputed results: no tokenising, no chunking, no sleeping."""

    name = "bench"
    model = "bench"

    def __init__(self, steps: int) -> None:
        usage = Usage(input_tokens=10, output_tokens=2)
        self._results = [
            ProviderResult(text="", tool_calls=[ToolCall(id=f"c{i}", name="noop", arguments={"i": i})],
                           stop_reason="tool_use", usage=usage)
            for i in range(steps - 1)
        ] + [ProviderResult(text="done", usage=usage)]
        self._i = 0

    def generate(self, messages, tools, **kw):
        result = self._results[self._i]
        self._i += 1
        return result

    def generate_stream(self, messages, tools, **kw):
        from jupyter_brain.providers.base import StreamEvent

        result = self.generate(messages, tools)
        if result.text:
            yield StreamEvent(type="text", text=result.text)
        yield StreamEvent(type="done", result=result)


def run(steps: int, stream: bool, db: Path, inline: bool = False) -> float:
    """Our harness: one turn of ``steps`` steps, SQLite event log on a file. ms per step.
    ``inline``: the tool runs on the agent's thread instead of a worker thread."""
    log = EventLog(db)
    harness = AgentHarness(InstantProvider(steps), AgentToolRegistry([noop_inline if inline else noop]), log,
                           max_steps=steps, timeout_s=600, stream=stream)
    gc.collect()  # earlier runs' garbage is not this run's cost (same for both frameworks)
    start = time.perf_counter()
    result = harness.run_turn("bench", [], "go")
    elapsed = time.perf_counter() - start
    assert result.status == "completed", result.status
    assert len(result.steps) == steps and len(result.tool_calls) == steps - 1
    log.close()
    return elapsed / steps * 1000


SMOLAGENTS_SETTINGS = (
    "verbosity_level=LogLevel.OFF (no rich console output), stream_outputs=False, "
    "planning_interval=None, no step callbacks, no final-answer checks"
)


def smolagents_runner() -> tuple[str, Callable[[int], float]] | None:
    """(version, run) for smolagents' ToolCallingAgent, or None when it is not installed."""
    try:
        import smolagents
        from smolagents import ChatMessage, LogLevel, Model, ToolCallingAgent
        from smolagents import tool as smol_tool
        from smolagents.models import (
            ChatMessageToolCall,
            ChatMessageToolCallFunction,
            MessageRole,
        )
        from smolagents.monitoring import TokenUsage
    except ImportError:
        return None

    def noop(i: int) -> str:  # the same trivial tool; smolagents wants an "Args:" section
        """Does nothing.

        Args:
            i: the step number.
        """
        return "ok"

    with warnings.catch_warnings():  # it warns when it reads a decorator other than "@tool"
        warnings.simplefilter("ignore", UserWarning)
        noop = smol_tool(noop)

    def call(i: int, name: str, arguments: dict) -> ChatMessage:
        return ChatMessage(
            role=MessageRole.ASSISTANT, content=None, token_usage=TokenUsage(input_tokens=10, output_tokens=2),
            tool_calls=[ChatMessageToolCall(id=f"c{i}", type="function",
                                            function=ChatMessageToolCallFunction(name=name, arguments=arguments))],
        )

    class ScriptedModel(Model):
        """Returns precomputed ChatMessages: N-1 calls of ``noop``, then ``final_answer``
        (a ToolCallingAgent's only way to answer). No message conversion, no network."""

        def __init__(self, steps: int) -> None:
            super().__init__(model_id="bench")
            self._replies = [call(i, "noop", {"i": i}) for i in range(steps - 1)]
            self._replies.append(call(steps - 1, "final_answer", {"answer": "done"}))
            self._i = 0

        def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):
            reply = self._replies[self._i]
            self._i += 1
            return reply

    def run_smolagents(steps: int) -> float:
        agent = ToolCallingAgent(tools=[noop], model=ScriptedModel(steps), max_steps=steps,
                                 verbosity_level=LogLevel.OFF, stream_outputs=False)
        gc.collect()
        start = time.perf_counter()
        answer = agent.run("go")
        elapsed = time.perf_counter() - start
        assert answer == "done", answer
        assert agent.step_number == steps + 1, agent.step_number  # N action steps, none failed
        assert not any(getattr(s, "error", None) for s in agent.memory.steps)
        return elapsed / steps * 1000

    return smolagents.__version__, run_smolagents


def handoff_us(rounds: int = 2000) -> float:
    """Microseconds for one bare round trip to a waiting thread (a queue put, then a lock
    the thread releases): the least a tool call on a worker thread can add to a step."""
    inbox: queue.SimpleQueue[threading.Lock | None] = queue.SimpleQueue()

    def worker() -> None:
        while (done := inbox.get()) is not None:
            done.release()

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(rounds):
            done = threading.Lock()
            done.acquire()
            inbox.put(done)
            done.acquire()
        times.append((time.perf_counter() - start) / rounds * 1e6)
    inbox.put(None)
    thread.join()
    return statistics.median(times)


def verdict(ours: dict[int, float], peer: dict[int, float] | None) -> str:
    spread = max(ours.values()) / min(ours.values())
    flat = spread <= FLAT_TOLERANCE
    text = f"flat in N: {'yes' if flat else 'no'} (max/min of medians {spread:.2f}, tolerance {FLAT_TOLERANCE})"
    if peer is None:
        return f"{text}; ratio to smolagents: not measured"
    ratios = {n: ours[n] / peer[n] for n in ours}
    within = all(r <= RATIO_GOAL for r in ratios.values())
    text += (f"; <= 1/3 of smolagents at every N: {'yes' if within else 'no'} "
             f"(worst ratio {max(ratios.values()):.2f})")
    return f"{'MET' if flat and within else 'NOT MET'} - {text}"


# Our columns: label -> (stream, inline). The default tool (worker thread) is "ours".
MODES: dict[str, tuple[bool, bool]] = {
    "ours": (False, False),
    "ours stream": (True, False),
    "ours inline": (False, True),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--one-cpu", action="store_true",
                        help="run on one CPU (Linux): threads hand over without waking another CPU")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0  # others' load, before ours
    if args.one_cpu:  # before any thread starts: every thread inherits it
        if not hasattr(os, "sched_setaffinity"):
            parser.error("--one-cpu needs Linux (os.sched_setaffinity)")
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    peer = smolagents_runner()
    ours: dict[str, dict[int, list[float]]] = {m: {n: [] for n in SIZES} for m in MODES}
    theirs: dict[int, list[float]] = {n: [] for n in SIZES}
    with tempfile.TemporaryDirectory() as tmp:
        # Warm-up (discarded): first-use costs (imports, tokenizer load, schema build).
        for i, (stream, inline) in enumerate(MODES.values()):
            run(SIZES[0], stream, Path(tmp) / f"warm-{i}.sqlite", inline)
        if peer is not None:
            peer[1](SIZES[0])
        # Interleaved, so a burst of load on the machine hits every column alike.
        for r in range(args.repeats):
            for n in SIZES:
                for i, (mode, (stream, inline)) in enumerate(MODES.items()):
                    ours[mode][n].append(run(n, stream, Path(tmp) / f"{n}-{i}-{r}.sqlite", inline))
                if peer is not None:
                    theirs[n].append(peer[1](n))

    handoff = handoff_us()
    med = {m: {n: statistics.median(v) for n, v in ours[m].items()} for m in MODES}
    peer_med = {n: statistics.median(v) for n, v in theirs.items()} if peer is not None else None
    print("per-step overhead, ms (one tool call per step; model and tool take no time)")
    busy = "  (busy machine: figures are noisy)" if load > 0.5 * (os.cpu_count() or 1) else ""
    print(f"load average before the run {load:.2f} on {os.cpu_count()} cores{busy}")
    cpus = "one CPU (--one-cpu)" if args.one_cpu else f"any of {os.cpu_count()} CPUs"
    print(f"threads run on {cpus}; one bare hand-off to a waiting thread and back: {handoff:.0f} µs")
    print(f"median of {args.repeats} runs per cell (min in brackets); wall time of the run / steps")
    print("work per run of N steps: N-1 steps calling noop(i), then the answer "
          "(smolagents answers through its final_answer tool call)")
    print("ours: AgentHarness.run_turn, SQLite event log on a file (committed before run_turn returns);")
    print("  ours, ours stream: the tool on a worker thread (the default: a hung tool can be timed out)")
    print("  ours inline: the tool marked @tool(inline=True), run on the agent's thread (no timeout)")
    if peer is not None:
        print(f"smolagents {peer[0]}: ToolCallingAgent.run, {SMOLAGENTS_SETTINGS}")
    header = f"{'N':>5}" + "".join(f" {m:>16}" for m in MODES)
    if peer is not None:
        header += f" {'smolagents':>16}" + "".join(f" {m.replace('ours', '').strip() or 'ours'}/smol".rjust(13)
                                                    for m in MODES)
    print(header)
    for n in SIZES:
        line = f"{n:>5}" + "".join(f" {med[m][n]:>8.3f} ({min(ours[m][n]):.3f})" for m in MODES)
        if peer_med is not None:
            line += f" {peer_med[n]:>8.3f} ({min(theirs[n]):.3f})"
            line += "".join(f" {med[m][n] / peer_med[n]:>12.2f}" for m in MODES)
        print(line)
    if peer is None:
        print("smolagents is not installed: no comparison. Install the peer with: pip install -e .[bench]")
    print(f"goal (issue #11): ours <= 1/3 of smolagents per step, flat from N={SIZES[0]} to N={SIZES[-1]}")
    for m in MODES:
        print(f"  {m}: {verdict(med[m], peer_med)}")
    print(f"goal: ours <= {ABSOLUTE_GOAL_MS} ms per step, at every N:")
    for m in MODES:
        worst = max(med[m].values())
        print(f"  {m}: {'met' if worst <= ABSOLUTE_GOAL_MS else 'not met'} (worst median {worst:.3f} ms)")


if __name__ == "__main__":
    main()
