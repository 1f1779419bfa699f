"""Recorded real streams (``tests/providers/recorded``) and a loopback server that replays them.

Each recording is a response body captured from a real service (or kept as test data by
the SDKs and projects that did), with a sidecar ``<name>.json`` saying where it came
from (repository, path, commit, or the documentation URL), how it is framed and what a
reader of the events finds in it (``expect``). Framing:

- ``sse``: the body exactly as the server sent it, replayed byte for byte;
- ``jsonl``: one JSON event per line, as the AI SDK keeps its fixtures; replayed as
  ``data: <line>`` events (with ``event: <type>`` for Anthropic, whose SDK needs it),
  without a closing ``data: [DONE]``.

The server reuses ``mock_servers.MockServer``'s plumbing (script queue, request log,
``HttpError`` answers); bodies go out in small pieces so the SDKs' SSE decoders meet
lines cut across network reads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from mock_servers import MockServer

RECORDED = Path(__file__).parent / "recorded"
PIECE = 97  # bytes per network write: lines and events get cut anywhere


@dataclass
class Recording:
    data_path: Path
    side: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.data_path.parent.name}/{self.data_path.stem}"

    @property
    def protocol(self) -> str:
        return str(self.side["protocol"])

    @property
    def expect(self) -> dict[str, Any]:
        return dict(self.side["expect"])

    def body(self) -> bytes:
        raw = self.data_path.read_bytes()
        if self.side["framing"] == "sse":
            return raw
        frames = []
        for line in raw.decode().splitlines():
            if not line.strip():
                continue
            if self.protocol == "anthropic":
                frames.append(f"event: {json.loads(line)['type']}\ndata: {line}\n\n")
            else:
                frames.append(f"data: {line}\n\n")
        return "".join(frames).encode()


    def payloads(self) -> list[Any]:
        """The JSON data of each event, in order (``[DONE]`` and lines that are not data left out)."""
        raw = self.data_path.read_text()
        if self.side["framing"] == "jsonl":
            lines = [line for line in raw.splitlines() if line.strip()]
        else:
            lines = [line[len("data:") :].strip() for line in raw.splitlines() if line.startswith("data:")]
        return [json.loads(line) for line in lines if line != "[DONE]"]

    def chat_usage(self) -> dict[str, int] | None:
        """The last usage a Chat Completions stream reports (in ``usage``, or Groq's
        ``x_groq.usage``), as the sidecars' ``usage_raw`` spells it; None when it has none."""
        found = None
        for chunk in self.payloads():
            usage = chunk.get("usage") or (chunk.get("x_groq") or {}).get("usage")
            if usage:
                found = usage
        if found is None:
            return None
        details = found.get("prompt_tokens_details") or {}
        return {
            "prompt": found["prompt_tokens"],
            "completion": found["completion_tokens"],
            "total": found["total_tokens"],
            "reasoning": (found.get("completion_tokens_details") or {}).get("reasoning_tokens", 0),
            "cached": details.get("cached_tokens") or found.get("prompt_cache_hit_tokens", 0),
        }


def recordings(protocol: str | None = None) -> list[Recording]:
    found = []
    for side_path in sorted(RECORDED.glob("*/*.json")):
        side = json.loads(side_path.read_text())
        data = [p for p in side_path.parent.glob(side_path.stem + ".*") if p.suffix != ".json"]
        assert len(data) == 1, f"{side_path}: expected one data file, found {data}"
        if protocol is None or side["protocol"] == protocol:
            found.append(Recording(data[0], side))
    return found


def recording(rec_id: str) -> Recording:
    return next(r for r in recordings() if r.id == rec_id)


@dataclass
class Body:
    """A 200 answer whose body is these bytes (an event stream unless ``content_type``)."""

    data: bytes
    content_type: str = "text/event-stream"


class ReplayServer(MockServer):
    """POST /v1/messages and /v1/chat/completions answer with scripted ``Body`` items;
    GET /v1/models lists ``models``."""

    def __init__(self, models: list[str] | None = None, *, anthropic: bool = False) -> None:
        super().__init__()
        self.models = models if models is not None else []
        self.anthropic = anthropic

    def error_body(self, message: str, error_type: str | None, status: int) -> Any:
        if self.anthropic:
            return {"type": "error", "error": {"type": error_type or "invalid_request_error", "message": message}}
        return {"error": {"message": message, "type": error_type or "invalid_request_error", "code": None}}

    def _get(self, h: BaseHTTPRequestHandler, path: str) -> None:
        if path == "/v1/models":
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "replay"} for m in self.models]
            return self._json(h, 200, {"object": "list", "data": data})
        super()._get(h, path)

    def _post(self, h: BaseHTTPRequestHandler, path: str, body: dict[str, Any], item: Any) -> None:
        if path not in ("/v1/messages", "/v1/chat/completions") or not isinstance(item, Body):
            return self._json(h, 404, self.error_body(f"replay cannot answer {path} with {item!r}", None, 404))
        h.send_response(200)
        h.send_header("content-type", item.content_type)
        h.send_header("transfer-encoding", "chunked")
        h.end_headers()
        for start in range(0, len(item.data), PIECE):
            piece = item.data[start : start + PIECE]
            h.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()
