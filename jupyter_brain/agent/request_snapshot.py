"""What the agent sent: the last model request of a turn, in parts, with their token counts.

"Show what the agent sent" (``%agent inspect``) needs the request exactly as built —
system prompt, the fresh layers (workspace, memories, context pack, ...), the history and
the tool schemas — after the secrets are masked. A turn keeps a reference to its last
request (``RequestCapture``, on the ``TurnResult``: no copy, nothing counted or written on
the agent's hot path); the snapshot is built, counted and masked only when someone asks,
and when the turn ends (the ``request_log`` integration stores it as a ``request`` record,
so earlier kernels' turns can be inspected).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..foundation.tokens import TokenCounter

Message = dict[str, Any]
REQUEST_RECORD = "request"  # the kind of a stored snapshot in the event log's records


class RequestPart(BaseModel):
    """One part of a request: ``kind`` is "system", a fresh layer's kind, or "history"."""

    model_config = ConfigDict(defer_build=True)  # validators built on first use, not at import (#40)

    kind: str
    tokens: int
    messages: list[Message] = Field(default_factory=list)


class ToolPart(BaseModel):
    name: str
    tokens: int
    schema_: dict[str, Any] = Field(default_factory=dict, alias="schema")

    model_config = ConfigDict(populate_by_name=True, defer_build=True)


class RequestSnapshot(BaseModel):
    model_config = ConfigDict(defer_build=True)

    session_id: str
    turn_id: str
    step: int
    provider: str = ""
    model: str = ""
    parts: list[RequestPart] = Field(default_factory=list)
    tools: list[ToolPart] = Field(default_factory=list)
    calibration: float = 1.0  # the counter's learned ratio to the provider's counts

    @property
    def total_tokens(self) -> int:
        return sum(p.tokens for p in self.parts) + sum(t.tokens for t in self.tools)


@dataclass(frozen=True)
class RequestCapture:
    """The last request of a turn as it was sent, with what is needed to show it later."""

    request: Sequence[Message]
    tool_schemas: Sequence[dict[str, Any]]
    counter: TokenCounter
    redact: Callable[[str], str]
    session_id: str
    turn_id: str
    step: int
    provider: str = ""
    model: str = ""

    def snapshot(self) -> RequestSnapshot:
        return snapshot_request(self.request, self.tool_schemas, counter=self.counter, redact=self.redact,
                                session_id=self.session_id, turn_id=self.turn_id, step=self.step,
                                provider=self.provider, model=self.model)


def snapshot_record(snapshot: RequestSnapshot) -> dict[str, Any]:
    """A snapshot as a record's JSON data (``snapshot_from_record`` reads it back)."""
    return snapshot.model_dump(mode="json", by_alias=True)


def snapshot_from_record(data: dict[str, Any]) -> RequestSnapshot:
    return RequestSnapshot.model_validate(data)


def snapshot_request(request: Sequence[Message], tool_schemas: Sequence[dict[str, Any]], *,
                     counter: TokenCounter, redact: Callable[[str], str], session_id: str,
                     turn_id: str, step: int, provider: str = "", model: str = "") -> RequestSnapshot:
    """The request split into its parts (consecutive system messages of one kind form one
    part; the history is one part), each counted with the session's calibrated counter.
    Every string is masked with ``redact``; images are replaced by a short note."""
    parts: list[RequestPart] = []
    for message in request:
        kind = "history" if message.get("role") != "system" else str(message.get("kind") or "system")
        clean = _masked(message, redact)
        tokens = counter.calibrated(counter.count_message(message))
        if parts and parts[-1].kind == kind:
            parts[-1].messages.append(clean)
            parts[-1].tokens += tokens
        else:
            parts.append(RequestPart(kind=kind, tokens=tokens, messages=[clean]))
    tools = [
        ToolPart(name=str(s.get("name", "")), tokens=counter.calibrated(counter.count_tools([s])),
                 schema=_masked(dict(s), redact))
        for s in tool_schemas
    ]
    return RequestSnapshot(session_id=session_id, turn_id=turn_id, step=step, provider=provider, model=model,
                           parts=parts, tools=tools, calibration=counter.factor)


def _masked(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        if "data" in value and value.get("media_type", "").startswith("image/"):
            return {"media_type": value["media_type"], "data": f"[{len(value['data']):,} bytes of base64]"}
        return {k: _masked(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_masked(v, redact) for v in value]
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    return redact(json.dumps(value, default=str))
