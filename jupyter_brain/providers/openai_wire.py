"""Neutral messages and tool schemas → Chat Completions request bodies.

All system messages are merged into one leading system message, workspace context last:
several chat templates (vLLM, Ollama) reject a system message that is not first.
Tool errors have no wire flag here, so their content is prefixed with ``ERROR:``.

Images on tool results (figures) cannot go in a tool message (text-only here): they follow
the run of tool messages as one user message of ``image_url`` data-URL parts, for models
that take images; others read a short note in the tool message instead.

Thinking is not sent back, except as ``reasoning_content`` where the server requires it
(DeepSeek's thinking mode answers 400 on a tool-call step without it, while other
servers reject the unknown field): ``reasoning_echo`` says on which assistant messages.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from jupyter_brain.providers.base import NO_IMAGES_NOTE, Message, ToolSchema, is_fresh_context, is_server_tool

# "off": never; "tool_calls": assistant messages that carry tool calls (DeepSeek's rule);
# "all": every assistant message with reasoning (servers that want it on every turn).
ReasoningEcho = Literal["off", "tool_calls", "all"]


def wire_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for t in tools
        if not is_server_tool(t)  # another provider's server tool: not ours to offer
    ]


def to_wire(messages: list[Message], reasoning_echo: ReasoningEcho = "off", *,
            images: bool = False) -> list[dict[str, Any]]:
    """Neutral messages → Chat Completions messages (``images``: the model takes images)."""
    stable = [m["content"] for m in messages if _is_system(m) and not is_fresh_context(m)]
    workspace = [m["content"] for m in messages if _is_system(m) and is_fresh_context(m)]
    system = "\n\n".join(c for c in stable + workspace if c)
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    figures: list[dict[str, Any]] = []  # image parts of the current run of tool messages
    for m in messages:
        role = m.get("role")
        if role != "tool" and figures:
            wire.append(_figures_message(figures))
            figures = []
        if role == "user":
            wire.append({"role": "user", "content": m.get("content") or ""})
        elif role == "assistant":
            wire.append(_assistant(m, reasoning_echo))
        elif role == "tool":
            content = str(m.get("content") or "")
            if m.get("is_error") and not content.startswith("ERROR"):
                content = "ERROR: " + content
            shown = m.get("images") or []
            if shown and images:
                figures += [_image_part(im) for im in shown]
            elif shown:
                content = f"{content}\n{NO_IMAGES_NOTE}" if content else NO_IMAGES_NOTE
            wire.append({"role": "tool", "tool_call_id": m.get("tool_call_id", ""), "content": content})
    if figures:
        wire.append(_figures_message(figures))
    return wire


def _image_part(image: dict[str, Any]) -> dict[str, Any]:
    url = f"data:{image.get('media_type') or 'image/png'};base64,{image.get('data', '')}"
    return {"type": "image_url", "image_url": {"url": url}}


def _figures_message(parts: list[dict[str, Any]]) -> dict[str, Any]:
    text = {"type": "text", "text": "The figure(s) returned by the tool call(s) above:"}
    return {"role": "user", "content": [text, *parts]}


def _assistant(m: Message, reasoning_echo: ReasoningEcho) -> dict[str, Any]:
    # "" rather than null: llama.cpp's server rejects a null content (HTTP 500), and
    # OpenAI-compatible servers accept an empty string beside tool calls.
    out: dict[str, Any] = {"role": "assistant", "content": m.get("content") or ""}
    calls = m.get("tool_calls") or []
    if calls:
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments") or {})},
            }
            for c in calls
        ]
    elif out["content"] is None:
        out["content"] = ""
    reasoning = reasoning_text(m)
    if (reasoning_echo == "tool_calls" and calls) or (reasoning_echo == "all" and (calls or reasoning)):
        out["reasoning_content"] = reasoning  # "" when none: the field must be present
    return out


def reasoning_text(message: Message) -> str:
    """The readable reasoning of an assistant message (redacted blocks have none)."""
    blocks = message.get("thinking") or []
    return "\n\n".join(b.get("text") or "" for b in blocks if not b.get("redacted") and b.get("text"))


def _is_system(message: Message) -> bool:
    return message.get("role") == "system"
