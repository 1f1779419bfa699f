"""A 2026-07-28 MCP server for the tests, built with the Python SDK 2.x (``MCPServer``), with
the ``io.modelcontextprotocol/tasks`` extension (the SDK has no server side for it: this file
is one, after the extension's spec).

    python modern_server.py [stdio|http fd=N] [--refuse] [--refuse-calls] [--legacy]

``--refuse`` rejects any request (``initialize`` included) whose client capabilities declare
roots or sampling, as a 2.x TypeScript server SDK does; ``--refuse-calls`` accepts such an
``initialize`` but then refuses every ``tools/call``; ``--legacy`` (stdio) serves
only the handshake era, so a client falls back from ``server/discover`` to the 2025-11-25
``initialize`` handshake. ``seen`` tells which methods came in and what capabilities the last
``tools/call`` declared, so a test can check what was sent.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp.server.elicitation import ElicitationResult
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer, Resolve
from mcp.server.mcpserver.resolve import Elicit
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

TASKS = "io.modelcontextprotocol/tasks"
CAPS = types.CLIENT_CAPABILITIES_META_KEY
REFUSE, LEGACY, REFUSE_CALLS = "--refuse" in sys.argv, "--legacy" in sys.argv, "--refuse-calls" in sys.argv
SEEN: dict[str, Any] = {"methods": [], "initialize_capabilities": None, "call_capabilities": None, "cancelled": 0}
STORE: dict[str, dict[str, Any]] = {}  # task id -> the task, as tasks/get answers it
ANSWERS: dict[str, asyncio.Future[dict[str, Any]]] = {}  # "task id/key" -> its input response
RUNNING: dict[str, asyncio.Task[None]] = {}


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _capabilities(ctx: Any) -> dict[str, Any]:
    params = ctx.params or {}
    if ctx.method == "initialize":
        return dict(params.get("capabilities") or {})
    return dict(((params.get("_meta") or {}).get(CAPS)) or {})


async def watch(ctx: Any, call_next: Any) -> Any:
    """Record what came in; refuse roots and sampling (--refuse, --refuse-calls)."""
    if ctx.request_id is None:
        return await call_next(ctx)
    SEEN["methods"].append(ctx.method)
    caps = _capabilities(ctx)
    if ctx.method == "initialize":
        SEEN["initialize_capabilities"] = caps
    if ctx.method == "tools/call":
        SEEN["call_capabilities"] = caps
    declared = SEEN["initialize_capabilities"] or {}
    if REFUSE_CALLS and ctx.method == "tools/call" and ("roots" in declared or "sampling" in declared):
        raise MCPError(code=types.INVALID_REQUEST, message="this server no longer serves clients that declare roots "
                                                          "or sampling")
    if REFUSE and ("roots" in caps or "sampling" in caps):
        raise MCPError(code=types.INVALID_PARAMS,
                       message="Unsupported client capabilities: roots and sampling were removed from this server")
    return await call_next(ctx)


# -- the tasks extension ------------------------------------------------------------------
class TaskParams(types.RequestParams):
    task_id: str = Field(alias="taskId")


class UpdateParams(TaskParams):
    input_responses: dict[str, Any] = Field(alias="inputResponses", default_factory=dict)


TASK_ONLY = {"research", "approve", "summarise", "shaped"}


class ServerTasks(Extension):
    identifier = TASKS

    def methods(self) -> Any:
        return [MethodBinding("tasks/get", TaskParams, _get), MethodBinding("tasks/update", UpdateParams, _update),
                MethodBinding("tasks/cancel", TaskParams, _cancel)]

    async def intercept_tool_call(self, params: Any, ctx: Any, call_next: Any) -> Any:
        if params.name == "haiku":
            return _haiku(params)
        if params.name not in TASK_ONLY:
            return await call_next(ctx)
        if TASKS not in (_capabilities(ctx).get("extensions") or {}):
            raise MCPError(code=types.MISSING_REQUIRED_CLIENT_CAPABILITY, message="Missing required client capability",
                           data={"requiredCapabilities": {"extensions": {TASKS: {}}}})
        task_id = uuid.uuid4().hex
        STORE[task_id] = {"taskId": task_id, "status": "working", "statusMessage": "queued", "createdAt": _now(),
                          "lastUpdatedAt": _now(), "ttlMs": 600_000, "pollIntervalMs": 100}
        work = {"research": _research, "approve": _approve, "summarise": _summarise, "shaped": _shaped}[params.name]
        RUNNING[task_id] = asyncio.get_running_loop().create_task(work(task_id, params.arguments or {}))
        return {"resultType": "task", **STORE[task_id]}


def _set(task_id: str, **fields: Any) -> None:
    STORE[task_id].update(fields, lastUpdatedAt=_now())


def _done(task_id: str, text: str) -> None:
    _set(task_id, status="completed", statusMessage="done",
         result={"content": [{"type": "text", "text": text}], "isError": False})


async def _research(task_id: str, arguments: dict[str, Any]) -> None:
    steps, seconds = int(arguments.get("steps", 3)), float(arguments.get("seconds", 0.3))
    for step in range(1, steps + 1):
        _set(task_id, statusMessage=f"step {step} of {steps}")
        await asyncio.sleep(seconds)
    if arguments.get("fail"):
        _set(task_id, status="failed", statusMessage="the archive is offline",
             error={"code": types.INTERNAL_ERROR, "message": "the archive is offline"})
        return
    _done(task_id, f"report on {arguments.get('topic', '?')}")


async def _approve(task_id: str, arguments: dict[str, Any]) -> None:
    item = arguments.get("item", "?")
    key = f"approve-{item}"
    ANSWERS[f"{task_id}/{key}"] = asyncio.get_running_loop().create_future()
    schema = {"type": "object", "properties": {"ok": {"type": "boolean", "title": "Approve?"}}, "required": ["ok"]}
    _set(task_id, status="input_required", statusMessage=f"waiting for approval of {item}",
         inputRequests={key: {"method": "elicitation/create",
                              "params": {"mode": "form", "message": f"Approve {item}?", "requestedSchema": schema}}})
    answer = await ANSWERS[f"{task_id}/{key}"]
    STORE[task_id].pop("inputRequests", None)
    _set(task_id, status="working", statusMessage="applying")
    accepted = answer.get("action") == "accept" and (answer.get("content") or {}).get("ok")
    _done(task_id, f"{item}: {'approved' if accepted else answer.get('action', 'declined')}")


def _sampling(prompt: str) -> dict[str, Any]:
    return {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": 40}}


def _sampled(response: dict[str, Any]) -> str:
    content = response.get("content") or {}
    return str(content.get("text") if isinstance(content, dict) else content)


def _haiku(params: Any) -> dict[str, Any]:
    """Sampling asked the 2026-07-28 way: an ``input_required`` result, answered on the retry."""
    answered = (params.input_responses or {}).get("poem")
    if answered is None:
        topic = (params.arguments or {}).get("topic", "?")
        return {"resultType": "input_required", "inputRequests": {"poem": _sampling(f"A haiku about {topic}")}}
    text = _sampled(answered.model_dump(by_alias=True, mode="json") if hasattr(answered, "model_dump") else answered)
    return {"resultType": "complete", "content": [{"type": "text", "text": f"haiku: {text}"}], "isError": False}


async def _summarise(task_id: str, arguments: dict[str, Any]) -> None:
    key = "summary"
    ANSWERS[f"{task_id}/{key}"] = asyncio.get_running_loop().create_future()
    _set(task_id, status="input_required", statusMessage="asking the client's model",
         inputRequests={key: _sampling(f"Summarise {arguments.get('text', '')}")})
    answer = await ANSWERS[f"{task_id}/{key}"]
    STORE[task_id].pop("inputRequests", None)
    _done(task_id, f"summary: {_sampled(answer)}")


async def _shaped(task_id: str, arguments: dict[str, Any]) -> None:
    _done(task_id, "no structured content, though the tool has an output schema")


def _task(task_id: str) -> dict[str, Any]:
    if task_id not in STORE:
        raise MCPError(code=types.INVALID_PARAMS, message="Failed to retrieve task: Task not found")
    return STORE[task_id]


async def _get(ctx: Any, params: TaskParams) -> dict[str, Any]:
    return {"resultType": "complete", **_task(params.task_id)}


async def _update(ctx: Any, params: UpdateParams) -> dict[str, Any]:
    _task(params.task_id)
    for key, response in params.input_responses.items():
        waiting = ANSWERS.get(f"{params.task_id}/{key}")
        if waiting is not None and not waiting.done():
            waiting.set_result(response)
    return {"resultType": "complete"}


async def _cancel(ctx: Any, params: TaskParams) -> dict[str, Any]:
    task = _task(params.task_id)
    if task["status"] not in ("completed", "failed", "cancelled"):
        RUNNING[params.task_id].cancel()
        _set(params.task_id, status="cancelled", statusMessage="cancelled by the client")
        SEEN["cancelled"] += 1
    return {"resultType": "complete"}


# -- tools -----------------------------------------------------------------------------------
server = MCPServer("modern", instructions="A 2026-07-28 server for jupyter-brain's tests.", log_level="WARNING",
                   extensions=[ServerTasks()], middleware=[watch])


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True), structured_output=False)
def research(topic: str, steps: int = 3, seconds: float = 0.3, fail: bool = False) -> str:
    """Research a topic (runs only as a task of the io.modelcontextprotocol/tasks extension)."""
    raise MCPError(code=types.INTERNAL_ERROR, message="research runs only as a task")


@server.tool(annotations=types.ToolAnnotations(read_only_hint=False), structured_output=False)
def approve(item: str) -> str:
    """Ask the user to approve an item, inside a task (input_required, then tasks/update)."""
    raise MCPError(code=types.INTERNAL_ERROR, message="approve runs only as a task")


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True), structured_output=False)
def haiku(topic: str) -> str:
    """A haiku from the client's model (sampling as an input_required result)."""
    raise MCPError(code=types.INTERNAL_ERROR, message="haiku is answered by the extension")


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True), structured_output=False)
def summarise(text: str) -> str:
    """A summary from the client's model, inside a task (sampling in inputRequests)."""
    raise MCPError(code=types.INTERNAL_ERROR, message="summarise runs only as a task")


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def shaped() -> int:
    """A task whose result breaks its own output schema (a server bug the client must survive)."""
    raise MCPError(code=types.INTERNAL_ERROR, message="shaped runs only as a task")


class Name(BaseModel):
    name: str = Field(description="your name")


def _which_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def greet(answer: Annotated[ElicitationResult[Name], Resolve(_which_name)]) -> str:
    """Greet the user by name (asked as an input_required result)."""
    return f"hello {answer.data.name}" if answer.action == "accept" else answer.action


@server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
def seen() -> str:
    """What this server has seen: methods, the last call's client capabilities, tasks cancelled."""
    return json.dumps(SEEN)


async def _serve_handshake_era() -> None:
    """stdio in the handshake era only (the SDK's loop mode): ``server/discover`` is refused."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server
    async with stdio_server() as (read, write), low.lifespan(low) as state:
        await serve_loop(low, read, write, lifespan_state=state, init_options=low.create_initialization_options())


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if args[:1] == ["http"]:
        import socket

        import uvicorn

        listening = socket.socket(fileno=int(args[1][3:]))
        app = server.streamable_http_app(host="127.0.0.1")
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listening])
    elif LEGACY:
        anyio.run(_serve_handshake_era)
    else:
        server.run()
