"""What a server asks the user for (``elicitation/create``, MCP 2025-11-25): a form (fields
of a flat JSON schema) or a URL to open (an out-of-band flow: sign-in, payment).

The kernel plugs in an ``Elicitor`` (``MCPManager.set_elicitor``): it gets a plain
``ElicitationRequest`` on a worker thread (never the MCP loop's), may block while the user
answers, and returns an ``ElicitationAnswer`` (accept with the form's values, decline, or
cancel). Without one, the request is declined at once with a log line: nothing hangs. The
capability (form and url) is declared on every connection, so servers offer the tools
that need it; on 2026-07-28 connections the same callback answers ``input_required``
results (the SDK retries the call with the answer).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..agent.tool_context import ToolContext

Action = Literal["accept", "decline", "cancel"]
NO_ELICITOR = "jupyter-brain: no one can be asked in this kernel"
KIND_WORDS = {"integer": "a whole number", "number": "a number"}


@dataclass(frozen=True)
class ElicitationRequest:
    """A server's question: ``mode`` form (``fields``: the schema's properties, in order) or
    url (``url``, ``elicitation_id``); ``message`` is the server's own text."""

    server: str
    mode: Literal["form", "url"]
    message: str
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    url: str = ""
    elicitation_id: str = ""
    call_id: str | None = None  # the tool call during which the server asked, when known

    def key(self) -> str:
        """What identifies the question across runs (a replay finds its recorded answer);
        the URL's one-time id is left out, the URL itself is not."""
        value = [self.server, self.mode, self.message, self.fields, list(self.required), self.url]
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
        return "elicit:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True)
class ElicitationAnswer:
    action: Action
    content: dict[str, Any] | None = None  # accept in form mode: the values by field name

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, **({"content": self.content} if self.content is not None else {})}

    @classmethod
    def of(cls, data: Any) -> ElicitationAnswer | None:
        if not isinstance(data, dict) or data.get("action") not in ("accept", "decline", "cancel"):
            return None
        content = data.get("content")
        return cls(data["action"], dict(content) if isinstance(content, dict) else None)


Elicitor = Callable[[ElicitationRequest], ElicitationAnswer]


def elicitation_callback(server: str, elicitor: Callable[[], Elicitor | None],
                         latest: Callable[[], ToolContext | None], log: Callable[[str, str], None]) -> Any:
    """The SDK ``Client``'s ``elicitation_callback`` for one connection. ``elicitor()`` is
    read at each request (the kernel sets it late); ``latest()`` is the call in flight."""
    import mcp_types as types

    async def elicitation(context: Any, params: Any) -> Any:
        answerer = elicitor()
        tool = latest()
        request = request_of(server, params, tool)
        if answerer is None:
            log("warning", f"elicitation declined: {NO_ELICITOR}")
            return types.ElicitResult(action="decline")
        try:
            answer = await asyncio.to_thread(_run, answerer, request, tool)
        except Exception as exc:  # noqa: BLE001 - the server gets an answer, the kernel keeps going
            log("warning", f"elicitation cancelled: the prompt failed ({type(exc).__name__}: {exc})")
            return types.ElicitResult(action="cancel")
        content = answer.content if answer.action == "accept" and request.mode == "form" else None
        return types.ElicitResult(action=answer.action, content=content)

    return elicitation


def request_of(server: str, params: Any, tool: ToolContext | None) -> ElicitationRequest:
    mode = getattr(params, "mode", "form") or "form"
    message = str(getattr(params, "message", "") or "")
    call_id = tool.call_id if tool is not None else None
    if mode == "url":
        return ElicitationRequest(server=server, mode="url", message=message, url=str(params.url),
                                  elicitation_id=str(getattr(params, "elicitation_id", "") or ""), call_id=call_id)
    schema = getattr(params, "requested_schema", None)
    if hasattr(schema, "model_dump"):
        schema = schema.model_dump(by_alias=True, exclude_none=True)
    schema = schema if isinstance(schema, dict) else {}
    properties = schema.get("properties") or {}
    fields = {str(name): dict(spec) if isinstance(spec, dict) else {} for name, spec in properties.items()}
    return ElicitationRequest(server=server, mode="form", message=message, fields=fields,
                              required=tuple(str(n) for n in schema.get("required") or ()), call_id=call_id)


def _run(elicitor: Elicitor, request: ElicitationRequest, tool: ToolContext | None) -> ElicitationAnswer:
    if tool is None:
        return elicitor(request)
    with tool.active():  # the elicitor sees the tool call it answers for
        return elicitor(request)


def checked_content(request: ElicitationRequest, values: Any) -> tuple[dict[str, Any] | None, str]:
    """The form's values typed per the schema (a number field's text → a number), or an
    error naming the first bad field."""
    if not isinstance(values, dict):
        return None, "the form sent no values"
    out: dict[str, Any] = {}
    for name, spec in request.fields.items():
        value = values.get(name)
        if value in (None, "", []):
            if name in request.required:
                return None, f"{spec.get('title') or name} is required"
            continue
        kind = spec.get("type")
        try:
            if kind == "integer":
                value = int(value)
            elif kind == "number":
                value = float(value)
            elif kind == "boolean":
                value = value if isinstance(value, bool) else str(value).lower() in ("true", "1", "yes", "on")
            elif kind == "array":
                value = [str(v) for v in (value if isinstance(value, list) else [value])]
            else:
                value = str(value)
        except (TypeError, ValueError):
            return None, f"{spec.get('title') or name} must be {KIND_WORDS.get(str(kind), str(kind))}"
        out[name] = value
    return out, ""
