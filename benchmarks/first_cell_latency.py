"""A fresh kernel's first ``%%agent`` cell right after ``%load_ext``, beside a fresh kernel's
first raw SDK cell that imports ``anthropic``: time to the first answer word (issue #40).

The model is ``tests/mock_servers.MockAnthropic`` in a subprocess (answers at once, over
loopback), named by ``ANTHROPIC_BASE_URL`` with a dummy ``ANTHROPIC_API_KEY``: plain ``%%agent``
(``auto``) picks the Anthropic provider, as it would for a user with a key. Fresh kernels are
started in turn, alternating the two paths (``--fresh N`` of each), each cell sent as
JupyterLab sends it (a ``cellId``, stdin allowed: the view is drawn):

  raw SDK      one cell: ``import anthropic``, a client, ``messages.stream`` → print the first
               text (what a user without jupyter-brain runs first)
  %%agent      a ``%load_ext jupyter_brain`` cell, then at once the first ``%%agent`` cell; its
               time runs from its ``execute_request`` to the view's first events batch holding a
               ``text_delta``. Printed too: the ``%load_ext`` cell's own time, and the two together

    python benchmarks/first_cell_latency.py [--fresh 5]

Also printed: the kernel process's CPU time (all threads, ``/proc``) from each cell's request to
its first word: the server answers at once, so the first word waits for CPU, and CPU time moves
less than wall time on a shared machine.

The package's bytecode is written first (``compileall``), as an installed package has it:
where ``PYTHONDONTWRITEBYTECODE`` is set, each fresh kernel would otherwise compile the
package from source (a few hundred ms of CPU the SDK, installed with its bytecode, never pays).

Where the gap goes (measured on the 2-core machine, issue #40): both cells pay ``import
anthropic`` (2.0-2.4 s of CPU, about 3,600 modules); after it, the raw cell's client and stream
take ~130 ms of CPU, and so does a warmed-up kernel's first ``%%agent`` turn (130-180 ms). The
gap was the package's own imports before the first word: ~250-300 ms of CPU with gc off, about
215 of our modules plus ipywidgets and anywidget (~65 ms) and the event types (~30 ms), and the
full collections those imports set off (the SDK's and ours: ~350 ms, three full collections
that free nothing). Since the warm-up imports with the collector paused (session 18), the
%%agent cell pays no collection there, while the raw cell still pays the SDK's (~220 ms). Under a
shared machine's load (load average well above the core count) medians move by seconds and
the gap's sign can flip: compare runs made in one quiet period, or count the imports' CPU
instructions (valgrind's callgrind) for a cut too small to see here.

Goal (issue #40): the first ``%%agent`` cell within 100 ms of the raw SDK's first cell.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIRST_WORD = "March"
ANSWER = f"{FIRST_WORD} had the largest drop."
PROMPT = "Which month had the largest drop?"

SERVER = r"""
import sys, time
sys.path[:0] = [sys.argv[1]]
from mock_servers import Count, MockAnthropic, Reply
server = MockAnthropic()
server.auto = lambda path, body: Count(12) if path.endswith("count_tokens") else Reply(text=sys.argv[2].split(" "))
server.start()
print(server.url, flush=True)
while True:
    time.sleep(3600)
"""

RAW_CELL = f"""\
import anthropic
_client = anthropic.Anthropic()
with _client.messages.stream(model="claude-sonnet-4-5", max_tokens=256,
                             messages=[{{"role": "user", "content": {PROMPT!r}}}]) as _stream:
    for _text in _stream.text_stream:
        print(_text, end="", flush=True)
"""


def start_server() -> tuple[subprocess.Popen[str], str]:
    words = " ".join(w + " " for w in ANSWER.split()).rstrip()
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(ROOT / "tests"), words],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    # The mock checks each body against the SDK's types; its first check builds them (seconds).
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 8, "stream": True,
                       "messages": [{"role": "user", "content": "warm up"}]}).encode()
    request = urllib.request.Request(f"{url}/v1/messages", body, {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as answer:
        answer.read()
    return proc, url


class Kernel:
    """A fresh kernel reached as JupyterLab reaches it."""

    def __init__(self, url: str) -> None:
        from jupyter_client import KernelManager

        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "JUPYTER_BRAIN_"))}
        env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-ant-bench-not-a-key")
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env, cwd=tempfile.mkdtemp(prefix="jb-first-cell-"))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def cpu_ms(self) -> float:
        """The kernel process's CPU time so far (all its threads), from /proc."""
        pid = self.km.provisioner.pid  # type: ignore[union-attr]
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    def cell(self, code: str) -> tuple[float, float]:
        """(ms to the first iopub message with answer text or 0, ms to the reply) of one cell;
        ``self.first_cpu``: the kernel's CPU ms from the request to that message."""
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": True, "stop_on_error": True}
        msg = self.kc.session.msg("execute_request", content)
        msg["metadata"]["cellId"] = str(uuid.uuid4())
        cpu_start = self.cpu_ms()
        start = time.perf_counter()
        self.kc.shell_channel.send(msg)
        first = 0.0
        self.first_cpu = 0.0
        while True:
            reply = self.kc.get_iopub_msg(timeout=120)
            if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
                continue
            now = time.perf_counter()
            kind, body = reply["msg_type"], reply["content"]
            if not first and _carries_answer(kind, body):
                first = now
                self.first_cpu = self.cpu_ms() - cpu_start
            if kind == "error":
                raise RuntimeError(f"cell failed: {body.get('evalue')}\n{code}")
            if kind == "status" and body["execution_state"] == "idle":
                break
        self.kc.get_shell_msg(timeout=60)
        return ((first - start) * 1000 if first else 0.0), (now - start) * 1000

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def _carries_answer(kind: str, body: dict[str, Any]) -> bool:
    if kind == "stream":
        return FIRST_WORD in body.get("text", "")
    if kind == "comm_msg":
        data = body.get("data", {})
        inner = data.get("content", {}) if data.get("method") == "custom" else {}
        return any(e.get("type") == "text_delta" for e in inner.get("events", ()) if isinstance(e, dict))
    return False


def raw_first_cell(url: str) -> tuple[float, float]:
    """(ms, kernel CPU ms) to the raw cell's first word."""
    kernel = Kernel(url)
    try:
        first = kernel.cell(RAW_CELL)[0]
        return first, kernel.first_cpu
    finally:
        kernel.close()


def agent_first_cell(url: str) -> tuple[float, float, float]:
    """(the %load_ext cell's ms, the first %%agent cell's ms and kernel CPU ms to its first word)."""
    kernel = Kernel(url)
    try:
        data_dir = tempfile.mkdtemp(prefix="jb-first-cell-data-")
        _, load = kernel.cell(f"%load_ext jupyter_brain\n%config AgentMagics.data_dir = {data_dir!r}")
        first, _ = kernel.cell(f"%%agent\n{PROMPT}")
        if not first:
            raise RuntimeError("the %%agent cell showed no answer text")
        return load, first, kernel.first_cpu
    finally:
        kernel.close()


def summary(ms: list[float]) -> str:
    return f"median {statistics.median(ms):7.1f} ms   min {min(ms):7.1f}   max {max(ms):7.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", type=int, default=5, help="fresh kernels per path")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "jupyter_brain", quiet=1)  # as installed: see the docstring
    server, url = start_server()
    try:
        raw, raw_cpu, loads, agents, agent_cpu = [], [], [], [], []
        for _ in range(args.fresh):
            ms, cpu = raw_first_cell(url)
            raw.append(ms)
            raw_cpu.append(cpu)
            load, first, cpu = agent_first_cell(url)
            loads.append(load)
            agents.append(first)
            agent_cpu.append(cpu)
    finally:
        server.terminate()
        server.wait()
    print(f"Fresh kernels, {args.fresh} of each, alternating (execute_request → first answer text):")
    print(f"  raw SDK first cell (import anthropic + stream)   {summary(raw)}")
    print(f"  %load_ext jupyter_brain cell (to its reply)       {summary(loads)}")
    print(f"  first %%agent cell right after it                 {summary(agents)}")
    both = [a + b for a, b in zip(loads, agents, strict=True)]
    print(f"  %load_ext + first %%agent                         {summary(both)}")
    gap = statistics.median(agents) - statistics.median(raw)
    print(f"  first %%agent cell − raw SDK first cell: {gap:+.1f} ms (goal <= +100 ms); "
          f"ratio {statistics.median(agents) / statistics.median(raw):.2f}")
    # CPU time is what the first word waits for here (the server answers at once), and it
    # moves less than wall time when other processes share the machine.
    print(f"  kernel CPU to the first word: raw SDK cell {summary(raw_cpu)}")
    print(f"                                %%agent cell {summary(agent_cpu)}")
    print(f"  CPU: first %%agent cell − raw SDK first cell: "
          f"{statistics.median(agent_cpu) - statistics.median(raw_cpu):+.1f} ms")


if __name__ == "__main__":
    main()
