"""Scripted mock servers for the Anthropic Messages API and OpenAI Chat Completions.

Real SDK clients talk to these over loopback, so the tests exercise the SDKs' own
streaming parsers, retries and error classes. Each server pops one scripted item per
request (``Reply``, ``HttpError`` or ``Count``) and records every request it receives.
The event shapes follow the public API references (message_start … message_stop with
ping and error events; ``data: {...}`` chunks ending with ``data: [DONE]``).

Every POST body is checked against the SDKs' own request types (``request_validation``):
an invalid one is answered with a 400 naming the bad field, as the real API would, and
kept in ``invalid_requests``; stopping the server (``stop``, the end of a ``with``
block, a fixture's teardown) then fails the test with the paths. An OpenAI-compatible
mock takes exactly the extra fields of the server it emulates (``dialect``, e.g.
``"deepseek"``); a test that sends an invalid request on purpose says so with
``expect_invalid``.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import request_validation


@dataclass
class ToolUse:
    name: str
    arguments: dict[str, Any] | None = None
    id: str | None = None
    raw: str | None = None  # sent instead of json.dumps(arguments): malformed JSON etc.
    pieces: int = 3  # the argument JSON is streamed in this many fragments
    index: int | None = None  # OpenAI: override the tool-call index (some servers reuse 0)

    def json_text(self) -> str:
        return self.raw if self.raw is not None else json.dumps(self.arguments or {})


@dataclass
class Reply:
    """One successful model answer, optionally failing part-way through the stream."""

    text: str | list[str] = ""  # a list gives the exact stream deltas
    thinking: str | list[str] | None = None
    signature: str | None = None
    redacted_thinking: str | None = None  # Anthropic: data of a redacted_thinking block
    thinking_style: str = "reasoning_content"  # OpenAI: or "reasoning"
    tool_calls: list[ToolUse] = field(default_factory=list)
    input_tokens: int = 10
    output_tokens: int = 5
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    stop_reason: str | None = None
    model: str | None = None
    error_after: int | None = None  # send an error event after this many events
    error_type: str = "overloaded_error"
    drop_after: int | None = None  # abort the connection after this many events
    truncate_after: int | None = None  # end the body cleanly after this many events
    hold_after: int | None = None  # wait for server.release after this many events


@dataclass
class HttpError:
    status: int
    message: str = "mock error"
    error_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Count:
    input_tokens: int


@dataclass
class Hangup:
    """Close the connection without answering (a reset before the response began)."""


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class InvalidRequest:
    """A request body the real API would refuse: where, and against which SDK type."""

    path: str
    checked_against: str
    problems: list[request_validation.Problem]

    def __str__(self) -> str:
        return f"POST {self.path} ({self.checked_against}):\n" + "\n".join(f"  {p}" for p in self.problems)


class InvalidRequestError(AssertionError):
    """A mock server received request bodies the real API would answer with a 400."""


@dataclass
class _Expected:
    field: str
    reason: str
    seen: int = 0


def _pieces(value: str | list[str] | None, n: int = 3) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    if not value:
        return []
    step = max(1, -(-len(value) // n))
    return [value[i : i + step] for i in range(0, len(value), step)]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up (as the SDKs do after errors) is normal; report the rest."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class MockServer:
    """Base: HTTP plumbing, the script queue, request recording and request validation."""

    def __init__(self, *, dialect: str = "openai") -> None:
        self.script: deque[Any] = deque()
        self.requests: list[Recorded] = []
        self.peers: list[tuple[str, int]] = []  # each request's client address: one per TCP connection
        self.dialect = dialect
        self.invalid_requests: list[InvalidRequest] = []
        self._expected: list[_Expected] = []
        self.release = threading.Event()
        # Fault injection: ``auto(path, body)`` may answer a request itself (return an
        # item) instead of taking the next scripted one (return None), e.g. to answer
        # count_tokens calls without shifting a script of model replies.
        self.auto: Callable[[str, Any], Any] | None = None
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # small SSE writes go out at once (no 40 ms delayed-ACK stalls)

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                owner._handle(self, None)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                owner._handle(self, json.loads(raw) if raw else None)

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def dialect(self) -> str:
        """The OpenAI-compatible server emulated: its extra request fields are accepted
        (``request_validation.DIALECTS``); ``"openai"`` takes exactly the SDK's fields."""
        return self._dialect

    @dialect.setter
    def dialect(self, name: str) -> None:
        request_validation.dialect_extensions(name)  # an unknown name fails here, not in the server thread
        self._dialect = name

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, *items: Any) -> MockServer:
        self.script.extend(items)
        return self

    def reset(self) -> list[Any]:
        """Drop what is left of the script and the recorded requests; returns the leftovers.
        Invalid requests stay: ``stop`` still fails for them."""
        with self._lock:
            left = list(self.script)
            self.script.clear()
            self.requests.clear()
        return left

    def bodies(self, path_suffix: str = "") -> list[Any]:
        return [r.body for r in self.requests if r.path.endswith(path_suffix)]

    def expect_invalid(self, field: str, reason: str) -> MockServer:
        """The test sends a body invalid at ``field`` (a path such as
        ``messages[2].reasoning_content``) on purpose, for ``reason``: such a body is
        answered from the script as any other and fails nothing. At least one must come
        (``stop`` checks); problems at other fields still fail the test."""
        self._expected.append(_Expected(field, reason))
        return self

    def check_requests(self) -> None:
        """Raise ``InvalidRequestError`` for the invalid bodies received so far, and for
        an ``expect_invalid`` whose body never came."""
        with self._lock:
            invalid = list(self.invalid_requests)
            unmet = [e for e in self._expected if not e.seen]
        lines = [str(r) for r in invalid]
        lines += [f"expect_invalid({e.field!r}) ({e.reason}): no request was invalid there" for e in unmet]
        if lines:
            raise InvalidRequestError(
                f"{type(self).__name__} received {len(invalid)} request(s) the real API would refuse "
                "(checked against the SDKs' request types, tests/request_validation.py):\n" + "\n".join(lines)
            )

    def start(self) -> MockServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut down, then fail (``InvalidRequestError``) if an invalid body came."""
        self.shutdown()
        self.check_requests()

    def shutdown(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None:
            return self.stop()
        self.shutdown()  # the block failed already: its error stays the one raised
        try:
            self.check_requests()
        except InvalidRequestError as invalid:
            exc.add_note(str(invalid))

    # -- plumbing --------------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler, body: Any) -> None:
        path = h.path.split("?")[0]
        with self._lock:
            self.peers.append(h.client_address)
            self.requests.append(
                Recorded(h.command, path, {k.lower(): v for k, v in h.headers.items()}, body)
            )
        if h.command == "GET":
            return self._get(h, path)
        invalid = self._validate(path, body)
        if invalid is not None:
            message = "invalid request: " + "; ".join(str(p) for p in invalid.problems)
            return self._json(h, 400, self.error_body(message, "invalid_request_error", 400))
        with self._lock:
            item = self.auto(path, body) if self.auto is not None else None
            if item is None:
                item = self.script.popleft() if self.script else None
        if item is None:
            return self._json(h, 400, self.error_body("mock script exhausted", None, 400))
        if isinstance(item, Hangup):
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        if isinstance(item, HttpError):
            return self._json(
                h, item.status, self.error_body(item.message, item.error_type, item.status), item.headers
            )
        self._post(h, path, body or {}, item)

    def _validate(self, path: str, body: Any) -> InvalidRequest | None:
        """The body's problems against the SDK request type of ``path``, recorded; None
        when it is valid or invalid only where the test said it would be."""
        try:
            found, checked_against = request_validation.request_problems(path, body, self.dialect)
        except TypeError as err:  # an SDK type the validator cannot read: fail loudly, not silently
            found, checked_against = [request_validation.Problem("", str(err))], "the SDK request types"
        if not found:
            return None
        with self._lock:
            unexpected = [p for p in found if not any(p.path == e.field for e in self._expected)]
            for e in self._expected:
                e.seen += any(p.path == e.field for p in found)
            if not unexpected:
                return None
            invalid = InvalidRequest(path, checked_against, unexpected)
            self.invalid_requests.append(invalid)
        return invalid

    def _json(
        self, h: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def _sse(self, h: BaseHTTPRequestHandler, frames: list[str], reply: Reply, error: str) -> None:
        """Send SSE frames as HTTP chunks, applying the reply's failure mode."""
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("transfer-encoding", "chunked")
        h.send_header("cache-control", "no-cache")
        h.end_headers()

        def chunk(text: str) -> None:
            data = text.encode()
            h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            h.wfile.flush()

        for i, frame in enumerate(frames):
            if i == reply.hold_after and not self.release.wait(5):
                reply = Reply(drop_after=i)  # nobody released us: fail loudly instead
            if i == reply.error_after:
                chunk(error)
                break
            if i == reply.drop_after:
                chunk(frame[: len(frame) // 2])  # half an event, then the line goes dead
                h.close_connection = True
                h.connection.shutdown(socket.SHUT_RDWR)
                return
            if i == reply.truncate_after:
                break
            chunk(frame)
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()

    # subclasses
    def _get(self, h: BaseHTTPRequestHandler, path: str) -> None:
        self._json(h, 404, self.error_body(f"no route GET {path}", "not_found_error", 404))

    def _post(self, h: BaseHTTPRequestHandler, path: str, body: dict[str, Any], item: Any) -> None:
        raise NotImplementedError

    def error_body(self, message: str, error_type: str | None, status: int) -> Any:
        raise NotImplementedError


# -- Anthropic -------------------------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class MockAnthropic(MockServer):
    """POST /v1/messages (JSON or SSE) and POST /v1/messages/count_tokens."""

    prompt_cache: Any = None  # a tests.prompt_cache.PromptCache to report cache usage

    def error_body(self, message: str, error_type: str | None, status: int) -> Any:
        kind = error_type or _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def _post(self, h: BaseHTTPRequestHandler, path: str, body: dict[str, Any], item: Any) -> None:
        if path == "/v1/messages/count_tokens":
            if not isinstance(item, Count):
                return self._json(h, 400, self.error_body(f"mock expected Count, got {item!r}", None, 400))
            return self._json(h, 200, {"input_tokens": item.input_tokens})
        if path != "/v1/messages" or not isinstance(item, Reply):
            return self._json(h, 404, self.error_body(f"mock cannot answer {path} with {item!r}", None, 404))
        model = item.model or body.get("model", "claude-mock")
        if self.prompt_cache is not None:  # usage as the API's prompt cache would report it
            u = self.prompt_cache.usage(body)
            item = dataclasses.replace(item, input_tokens=u["input_tokens"], cache_read_tokens=u["cache_read_input_tokens"],
                                       cache_creation_tokens=u["cache_creation_input_tokens"])
        if not body.get("stream"):
            return self._json(h, 200, self.message(item, model))
        error = _frame("error", {"type": "error", "error": {"type": item.error_type, "message": "mock stream error"}})
        self._sse(h, [_frame(e["type"], e) for e in self.events(item, model)], item, error)

    @staticmethod
    def _usage(item: Reply) -> dict[str, Any]:
        return {
            "input_tokens": item.input_tokens,
            "output_tokens": item.output_tokens,
            "cache_read_input_tokens": item.cache_read_tokens,
            "cache_creation_input_tokens": item.cache_creation_tokens,
        }

    @staticmethod
    def _stop(item: Reply) -> str:
        return item.stop_reason or ("tool_use" if item.tool_calls else "end_turn")

    def message(self, item: Reply, model: str) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if item.thinking is not None:
            thinking = "".join(_pieces(item.thinking))
            content.append({"type": "thinking", "thinking": thinking, "signature": item.signature or ""})
        if item.redacted_thinking:
            content.append({"type": "redacted_thinking", "data": item.redacted_thinking})
        text = "".join(_pieces(item.text))
        if text:
            content.append({"type": "text", "text": text})
        for n, call in enumerate(item.tool_calls):
            content.append(
                {"type": "tool_use", "id": call.id or f"toolu_{n:02d}", "name": call.name, "input": call.arguments or {}}
            )
        return {
            "id": "msg_mock",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": self._stop(item),
            "stop_sequence": None,
            "usage": self._usage(item),
        }

    def events(self, item: Reply, model: str) -> list[dict[str, Any]]:
        start_usage = self._usage(item) | {"output_tokens": 1}
        events: list[dict[str, Any]] = [
            {
                "type": "message_start",
                "message": {
                    "id": "msg_mock",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
            {"type": "ping"},
        ]
        index = 0

        def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
            nonlocal index
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
            events.append({"type": "content_block_stop", "index": index})
            index += 1

        if item.thinking is not None:
            deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(item.thinking)]
            deltas.append({"type": "signature_delta", "signature": item.signature or ""})
            block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
        if item.redacted_thinking:
            block({"type": "redacted_thinking", "data": item.redacted_thinking}, [])
        if _pieces(item.text):
            block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _pieces(item.text)])
        for n, call in enumerate(item.tool_calls):
            fragments = _pieces(call.json_text(), call.pieces)
            block(
                {"type": "tool_use", "id": call.id or f"toolu_{n:02d}", "name": call.name, "input": {}},
                [{"type": "input_json_delta", "partial_json": f} for f in fragments],
            )
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": self._stop(item), "stop_sequence": None},
                "usage": {"output_tokens": item.output_tokens},
            }
        )
        events.append({"type": "message_stop"})
        return events


def _frame(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


# -- OpenAI Chat Completions -----------------------------------------------------------


class MockOpenAI(MockServer):
    """POST /v1/chat/completions (JSON or SSE) and GET /v1/models."""

    def __init__(self, models: list[str] | None = None, *, dialect: str = "openai") -> None:
        super().__init__(dialect=dialect)
        self.models = models if models is not None else ["mock-model"]

    def error_body(self, message: str, error_type: str | None, status: int) -> Any:
        return {"error": {"message": message, "type": error_type or "server_error", "code": None}}

    def _get(self, h: BaseHTTPRequestHandler, path: str) -> None:
        if path == "/v1/models":
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "mock"} for m in self.models]
            return self._json(h, 200, {"object": "list", "data": data})
        super()._get(h, path)

    def _post(self, h: BaseHTTPRequestHandler, path: str, body: dict[str, Any], item: Any) -> None:
        if path != "/v1/chat/completions" or not isinstance(item, Reply):
            return self._json(h, 404, self.error_body(f"mock cannot answer {path} with {item!r}", None, 404))
        model = item.model or body.get("model") or "mock-model"
        if not body.get("stream"):
            return self._json(h, 200, self.completion(item, model))
        frames = [f"data: {json.dumps(c)}\n\n" for c in self.chunks(item, model)]
        frames.append("data: [DONE]\n\n")
        error = "data: " + json.dumps({"error": {"message": "mock stream error", "type": item.error_type}}) + "\n\n"
        self._sse(h, frames, item, error)

    @staticmethod
    def _usage(item: Reply) -> dict[str, Any]:
        prompt = item.input_tokens + item.cache_read_tokens
        return {
            "prompt_tokens": prompt,
            "completion_tokens": item.output_tokens,
            "total_tokens": prompt + item.output_tokens,
            "prompt_tokens_details": {"cached_tokens": item.cache_read_tokens},
        }

    @staticmethod
    def _finish(item: Reply) -> str:
        return item.stop_reason or ("tool_calls" if item.tool_calls else "stop")

    def completion(self, item: Reply, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(_pieces(item.text)) or None}
        if item.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{n}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.json_text()},
                }
                for n, call in enumerate(item.tool_calls)
            ]
        return {
            "id": "chatcmpl-mock",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish(item)}],
            "usage": self._usage(item),
        }

    def chunks(self, item: Reply, model: str) -> list[dict[str, Any]]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": "chatcmpl-mock",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        out = [chunk({"role": "assistant", "content": ""})]
        out += [chunk({item.thinking_style: p}) for p in _pieces(item.thinking)]
        out += [chunk({"content": p}) for p in _pieces(item.text)]
        for n, call in enumerate(item.tool_calls):
            idx = n if call.index is None else call.index
            head = {"index": idx, "id": call.id or f"call_{n}", "type": "function"}
            out.append(chunk({"tool_calls": [head | {"function": {"name": call.name, "arguments": ""}}]}))
            for fragment in _pieces(call.json_text(), call.pieces):
                out.append(chunk({"tool_calls": [{"index": idx, "function": {"arguments": fragment}}]}))
        out.append(chunk({}, self._finish(item)))
        out.append(
            {
                "id": "chatcmpl-mock",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [],
                "usage": self._usage(item),
            }
        )
        return out
