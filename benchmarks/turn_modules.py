"""How much of the package a turn touches: the modules a traced ``%%agent`` cell enters,
and the modules one streamed text chunk passes through on its way to the view.

A scripted ``%%agent`` cell (two tool calls, then a streamed answer of many chunks) runs in
an in-process IPython shell with OpenTelemetry tracing on (an SDK tracer provider with an
in-memory exporter). ``sys.setprofile`` records every function of ``jupyter_brain`` that
runs. "Per chunk": the modules entered between two text chunks of the stream (the first
and the last few chunks left out), the median over chunks. Prints figures; asserts nothing.

    python benchmarks/turn_modules.py [FILE]   (FILE: where to list the modules entered)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if "PYTHONPATH" not in os.environ:  # benchmarks/revisions.py points PYTHONPATH at another tree
    sys.path.insert(0, str(ROOT))
import jupyter_brain  # noqa: E402 - after the path is set

PACKAGE = Path(jupyter_brain.__file__).resolve().parent  # the package measured
ANSWER_WORDS = 120


def module_of(filename: str) -> str | None:
    path = Path(filename)
    if not path.is_relative_to(PACKAGE):
        return None
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class Recorder:
    """The package's modules whose functions ran, in total and since the last ``cut``."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.since_cut: set[str] = set()
        self.cuts: list[set[str]] = []
        self._names: dict[str, str | None] = {}

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        filename = frame.f_code.co_filename
        name = self._names.get(filename, "")
        if name == "":
            name = self._names[filename] = module_of(filename)
        if name is not None:
            self.seen.add(name)
            self.since_cut.add(name)

    def cut(self) -> None:
        self.cuts.append(self.since_cut)
        self.since_cut = set()


def main() -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from jupyter_brain.agent.tracing import use_tracer_provider
    from jupyter_brain.providers.scripted import ScriptedProvider

    recorder = Recorder()
    answer = " ".join(f"word{i}" for i in range(ANSWER_WORDS))
    script = [
        {"text": "", "tool_calls": [{"id": "c1", "name": "list_variables", "arguments": {}}]},
        {"text": "", "tool_calls": [{"id": "c2", "name": "inspect_variable", "arguments": {"name": "sales"}}]},
        answer,
    ]

    class ChunkMarking(ScriptedProvider):
        """Marks each text chunk's arrival: what ran since the previous one is its path."""

        def generate_stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
            for event in super().generate_stream(*args, **kwargs):
                if event.type == "text":
                    recorder.cut()
                yield event

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    use_tracer_provider(tracer_provider)
    os.chdir(tempfile.mkdtemp())
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "jupyter_brain")
    shell.user_ns.update(sales=[1, 2, 3], bot=ChunkMarking(script, chunk_words=1))
    # Warm (imports, caches) with another cell: the same text again would replay its recording.
    shell.run_cell_magic("agent", "--provider bot --stream", "What is in sales? (warming up)")
    shell.user_ns["bot"] = bot = ChunkMarking(script, chunk_words=1)
    recorder.cuts.clear()
    sys.setprofile(recorder)
    try:
        shell.run_cell_magic("agent", "--provider bot --stream", "What is in sales?")
    finally:
        sys.setprofile(None)
        use_tracer_provider(None)
    result = shell.user_ns["_agent"]
    assert result.status == "completed" and len(result.tool_calls) == 2, (result.status, result.error)
    assert len(bot.calls) == 3 and exporter.get_finished_spans(), "the turn was not traced"
    total = len([p for p in PACKAGE.rglob("*.py")])
    per_chunk = [len(c) for c in recorder.cuts[2:-2]]  # between two text chunks of the answer
    agent_seen = sorted(m for m in recorder.seen if m.startswith("jupyter_brain.agent"))
    print(f"package modules: {total}")
    print(f"a traced %%agent cell enters: {len(recorder.seen)} modules ({len(agent_seen)} of them in agent/)")
    print(f"one streamed chunk passes through: {statistics.median(per_chunk):g} modules "
          f"(median of {len(per_chunk)} chunks; min {min(per_chunk)}, max {max(per_chunk)})")
    chunk = max(recorder.cuts[2:-2], key=len)
    print("  " + ", ".join(sorted(m.removeprefix("jupyter_brain.") for m in chunk)))
    if len(sys.argv) > 1:  # a file to list the modules the cell entered in
        Path(sys.argv[1]).write_text("\n".join(sorted(recorder.seen)) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
