"""Harness overhead per step, with the model and the tool taking no time at all.

Each step: one scripted model call that asks for one tool call, the tool runs, events
are logged to a SQLite file. What is left of the wall time is the harness's own cost.
Goal: <= 0.3 ms per step, flat in N. Prints figures; asserts nothing.

    python benchmarks/overhead.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.base import ProviderResult, ToolCall, Usage


@tool
def noop(i: int) -> str:
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


def run(steps: int, stream: bool, db: Path) -> float:
    log = EventLog(db)
    harness = AgentHarness(InstantProvider(steps), AgentToolRegistry([noop]), log,
                           max_steps=steps, timeout_s=600, stream=stream)
    start = time.perf_counter()
    result = harness.run_turn("bench", [], "go")
    elapsed = time.perf_counter() - start
    assert result.status == "completed", result.status
    log.close()
    return elapsed / steps * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print("harness overhead per step (one tool call per step, SQLite event log on a file)")
    print(f"{'N':>5} {'stream':>7} {'median ms/step':>15} {'min ms/step':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for stream in (False, True):
            for steps in (20, 100, 200):
                figures = [run(steps, stream, Path(tmp) / f"{steps}-{stream}-{r}.sqlite") for r in range(args.repeats)]
                print(f"{steps:>5} {str(stream):>7} {statistics.median(figures):>15.3f} {min(figures):>12.3f}")
    print("goal: <= 0.3 ms per step, flat in N")


if __name__ == "__main__":
    main()
