"""Latency to the first answer token that we add over the raw ``openai`` SDK, on one local server.

A local OpenAI-compatible server (a subprocess of this script; it answers at once, so what is
measured is the client side's own time) streams a short answer. Each path is timed from the
moment the request starts to the first piece of answer text, in repetitions interleaved in a
shuffled order, and printed as median and p90 beside the raw SDK's time in the same run:

in this process
  raw SDK         ``client.chat.completions.create(stream=True)`` → the first content delta
                  (the client kept, as a user keeps it)
  provider        ``OpenAICompatProvider.generate_stream`` → the first ``text`` event (kept)
  run_turn        ``AgentHarness.run_turn`` (built-in notebook tools, an event log) → the
                  first ``TextDelta`` its ``on_event`` sees

in a real kernel (jupyter_client + ipykernel), each cell sent as JupyterLab sends it (a
``cellId``, stdin allowed, so the widget is drawn): from the ``execute_request`` leaving the
client to the first iopub message carrying answer text
  raw SDK cell    the cell prints the first content delta (``flush=True``): a ``stream`` message
  %%agent …       the view's first events batch holding a ``text_delta`` (a comm message);
                  ``--provider bot`` (a provider kept in a variable), plain ``%%agent``
                  (``auto``: ``OPENAI_BASE_URL`` names the server, no key), ``--provider openai``

First-turn warm-up: fresh kernels (``--fresh N``); in each, ``%load_ext jupyter_brain`` and the
raw SDK's first call (the SDK's import and first connection are the SDK's, not ours), then the
first ``%%agent`` cell, then four more. *Our first-turn warm-up* = the first ``%%agent`` cell's
time to its first answer text − the median of the four later ones. Printed twice: with the
first turn right after those two cells (the background warm-up of ``%load_ext`` still running,
the cold case), and after ``warm_up.wait()`` (a notebook's data cells gave it time).

    python benchmarks/first_token_latency.py [--repeats 15] [--fresh 3] [--skip-kernel]

Goals (issue #26): ≤ +20 ms to the first token through ``%%agent`` with the view for every
provider choice; ≤ 100 ms of our own first-turn warm-up. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

MODEL = "bench-model"
ANSWER = ["March", " had", " the", " largest", " drop", "."]

SERVER = r"""
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL, ANSWER = sys.argv[1], json.loads(sys.argv[2])


def chunk(delta, finish=None, usage=None):
    body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
            "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        body["usage"] = usage
    return "data: " + json.dumps(body) + "\n\n"


FRAMES = ([chunk({"role": "assistant", "content": ""})] + [chunk({"content": t}) for t in ANSWER]
          + [chunk({}, "stop"), chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 6, "total_tokens": 16}),
             "data: [DONE]\n\n"])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def _send(self, status, ctype, data):
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        data = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0,
                                                       "owned_by": "bench"}]}).encode()
        self._send(200, "application/json", data)

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for frame in FRAMES:
            data = frame.encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # a kernel shut down mid-connection: normal
        pass


httpd = Server(("127.0.0.1", 0), Handler)
print(httpd.server_address[1], flush=True)
httpd.serve_forever()
"""


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-c", SERVER, MODEL, json.dumps(ANSWER)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}/v1"


def summary(ms: list[float]) -> str:
    ordered = sorted(ms)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"median {statistics.median(ms):7.2f} ms   p90 {p90:7.2f} ms"


def report(title: str, figures: dict[str, list[float]], base: str) -> None:
    """Each path's median/p90, and what it adds over ``base`` (the raw SDK), pairwise per repetition."""
    print(title)
    for name, ms in figures.items():
        line = f"  {name:<28} {summary(ms)}"
        if name != base:
            added = [a - b for a, b in zip(ms, figures[base], strict=True)]
            line += f"   added: median {statistics.median(added):+7.2f} ms"
        print(line)


# ── in this process ──────────────────────────────────────────────────────────
def in_process(url: str, repeats: int) -> dict[str, list[float]]:
    import openai

    from jupyter_brain.agent.artifacts import ArtifactStore, artifact_tool
    from jupyter_brain.agent.events import EventLog
    from jupyter_brain.agent.harness import AgentHarness
    from jupyter_brain.agent.tools import AgentToolRegistry
    from jupyter_brain.providers.openai_compat import OpenAICompatProvider
    from jupyter_brain.tools import default_tools

    client = openai.OpenAI(base_url=url, api_key="not-needed")
    provider = OpenAICompatProvider(preset="openai", base_url=url)
    folder = tempfile.mkdtemp(prefix="jb-first-token-")
    log = EventLog(os.path.join(folder, "events.sqlite"))
    messages = [{"role": "user", "content": "Which month had the largest drop?"}]

    def raw() -> float:
        start = time.perf_counter()
        stream = client.chat.completions.create(model=MODEL, messages=messages, stream=True)  # type: ignore[arg-type]
        first = 0.0
        for chunk in stream:
            if not first and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter()
        return (first - start) * 1000

    def ours() -> float:
        start = time.perf_counter()
        first = 0.0
        for event in provider.generate_stream(messages, []):  # type: ignore[arg-type]
            if not first and event.type == "text" and event.text:
                first = time.perf_counter()
        return (first - start) * 1000

    def turn() -> float:
        tools = AgentToolRegistry([*default_tools({}, folder), artifact_tool(ArtifactStore())])
        harness = AgentHarness(provider, tools, log, stream=True, timeout_s=60)
        first: list[float] = []

        def on_event(event: Any) -> None:
            if not first and getattr(event, "type", "") == "text_delta":
                first.append(time.perf_counter())

        start = time.perf_counter()
        harness.run_turn("bench", [], "Which month had the largest drop?", on_event=on_event, persist_history=False)
        return (first[0] - start) * 1000

    paths: dict[str, Callable[[], float]] = {"raw SDK": raw, "provider (kept)": ours, "run_turn": turn}
    for fn in paths.values():  # imports, first connections
        fn()
    figures: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(repeats):
        for name in random.sample(list(paths), len(paths)):
            figures[name].append(paths[name]())
    log.close()
    return figures


# ── in a kernel ───────────────────────────────────────────────────────────────
RAW_CELL = f"""\
_t = _raw.chat.completions.create(model={MODEL!r}, messages=[{{"role": "user", "content": "hi"}}], stream=True)
_seen = False
for _c in _t:
    if not _seen and _c.choices and _c.choices[0].delta.content:
        print(_c.choices[0].delta.content, flush=True)
        _seen = True
"""
PROMPT = "Which month had the largest drop?"
AGENT_CELLS = {
    "%%agent --provider bot (kept)": f"%%agent --provider bot\n{PROMPT}",
    "%%agent (auto)": f"%%agent\n{PROMPT}",
    "%%agent --provider openai": f"%%agent --provider openai\n{PROMPT}",
}


class Kernel:
    """A kernel reached as JupyterLab reaches it; ``time_to_text`` times one cell."""

    def __init__(self, url: str, data_dir: str) -> None:
        from jupyter_client import KernelManager

        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "OPENAI_", "JUPYTER_BRAIN_"))}
        env["OPENAI_BASE_URL"] = url
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.data_dir = data_dir

    def run(self, code: str) -> None:
        """Run a setup cell; raise if it failed."""
        reply = self.kc.execute_interactive(code, timeout=120, output_hook=lambda msg: None)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"cell failed: {reply['content'].get('evalue')}\n{code}")

    def time_to_text(self, code: str) -> float:
        """ms from sending the cell to the first iopub message carrying answer text."""
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": True, "stop_on_error": True}
        msg = self.kc.session.msg("execute_request", content)
        msg["metadata"]["cellId"] = str(uuid.uuid4())  # as JupyterLab sends it: not headless
        start = time.perf_counter()
        self.kc.shell_channel.send(msg)
        first = 0.0
        while True:
            reply = self.kc.get_iopub_msg(timeout=60)
            if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
                continue
            now = time.perf_counter()
            kind, body = reply["msg_type"], reply["content"]
            if not first and _carries_answer(kind, body):
                first = now
            if kind == "error":
                raise RuntimeError(f"cell failed: {body.get('evalue')}\n{code}")
            if kind == "status" and body["execution_state"] == "idle":
                break
        self.kc.get_shell_msg(timeout=60)
        if not first:
            raise RuntimeError(f"no answer text came from:\n{code}")
        return (first - start) * 1000

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def _carries_answer(kind: str, body: dict[str, Any]) -> bool:
    if kind == "stream":
        return ANSWER[0] in body.get("text", "")
    if kind == "comm_msg":
        data = body.get("data", {})
        inner = data.get("content", {}) if data.get("method") == "custom" else {}
        return any(e.get("type") == "text_delta" for e in inner.get("events", ()) if isinstance(e, dict))
    return False


def setup_code(data_dir: str) -> str:
    return (
        "%load_ext jupyter_brain\n"
        f"%config AgentMagics.data_dir = {data_dir!r}\n"
        "import openai as _openai_sdk\n"  # (a variable named openai would shadow --provider openai)
        "_raw = _openai_sdk.OpenAI(api_key='not-needed')\n"  # OPENAI_BASE_URL names the server
    )


def in_kernel(url: str, repeats: int) -> dict[str, list[float]]:
    data_dir = tempfile.mkdtemp(prefix="jb-first-token-kernel-")
    kernel = Kernel(url, data_dir)
    try:
        kernel.run(setup_code(data_dir))
        kernel.run("from jupyter_brain import get_provider\nbot = get_provider('auto')\n"
                   "from jupyter_brain.notebook import warm_up\nwarm_up.wait(120)")
        paths = {"raw SDK cell": RAW_CELL, **AGENT_CELLS}
        for code in paths.values():  # each path's first run: imports, connections
            kernel.time_to_text(code)
        figures: dict[str, list[float]] = {name: [] for name in paths}
        for _ in range(repeats):
            for name in random.sample(list(paths), len(paths)):
                figures[name].append(kernel.time_to_text(paths[name]))
        return figures
    finally:
        kernel.close()


def first_turn(url: str, fresh: int, wait: bool) -> tuple[list[float], list[float]]:
    """Per fresh kernel: (first %%agent cell's time to text, the four later ones' median)."""
    firsts, steadies = [], []
    for _ in range(fresh):
        data_dir = tempfile.mkdtemp(prefix="jb-first-turn-")
        kernel = Kernel(url, data_dir)
        try:
            kernel.run(setup_code(data_dir))
            kernel.time_to_text(RAW_CELL)
            if wait:
                kernel.run("from jupyter_brain.notebook import warm_up\nwarm_up.wait(120)")
            firsts.append(kernel.time_to_text(AGENT_CELLS["%%agent (auto)"]))
            steadies.append(statistics.median(kernel.time_to_text(AGENT_CELLS["%%agent (auto)"]) for _ in range(4)))
        finally:
            kernel.close()
    return firsts, steadies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--fresh", type=int, default=3, help="fresh kernels for the first-turn warm-up")
    parser.add_argument("--skip-kernel", action="store_true", help="only the in-process paths")
    args = parser.parse_args()
    server, url = start_server()
    try:
        report(f"In this process, {args.repeats} interleaved repetitions (time to the first answer text):",
               in_process(url, args.repeats), "raw SDK")
        if args.skip_kernel:
            return
        report(f"In a kernel, as JupyterLab sends cells, {args.repeats} interleaved repetitions "
               "(execute_request → first iopub message with answer text):",
               in_kernel(url, args.repeats), "raw SDK cell")
        print(f"First-turn warm-up, {args.fresh} fresh kernels (first %%agent cell − median of the next four):")
        for wait, label in ((False, "right after %load_ext + the raw SDK's first call"),
                            (True, "after warm_up.wait() (the background warm-up done)")):
            firsts, steadies = first_turn(url, args.fresh, wait)
            extra = [f - s for f, s in zip(firsts, steadies, strict=True)]
            print(f"  {label}:\n    first turn {summary(firsts)}   later turns median "
                  f"{statistics.median(steadies):.2f} ms   our warm-up: median {statistics.median(extra):.1f} ms, "
                  f"max {max(extra):.1f} ms")
        print("goals: <= +20 ms over the raw SDK cell for every %%agent provider choice; "
              "<= 100 ms of our own first-turn warm-up")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
