"""What a ``%%agent`` cell takes from MCP servers besides tools: ``--resource`` and ``--mcp-prompt``.

``--resource SERVER:URI`` is read once, before the turn, and attached the way the workspace
is: a context layer rendered into each request of that turn and never copied into the
history (``agent/context/layers.py``). A later turn does not carry it; a re-run (Run All)
reads it again, so it sees the resource as it is then. A resource that cannot be read
stops the cell before the turn runs, with one line: the user asked for that context, and
an answer without it would be an answer to another question, paid for.

``--mcp-prompt SERVER:NAME --arg KEY=VALUE ...`` fetches the server's prompt; its
messages become the turn's user text (the history keeps it, like a typed prompt), and the
cell's body, if any, follows it. Missing or unknown arguments are named before any call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from IPython.core.error import UsageError

from ..agent.context.layers import ContextLayer
from ..agent.hooks import TurnHook

# A resource bigger than this is cut (with a note saying how much was left out): one
# attached file must not crowd the conversation out of the context window.
RESOURCE_CHARS = 60_000


@dataclass(frozen=True)
class AttachedResource:
    ref: str  # SERVER:URI as the cell gave it
    text: str


@dataclass
class MCPCellInputs:
    """The cell's resources (as one context layer) and the turn's prompt."""

    prompt: str
    resources: list[AttachedResource] = field(default_factory=list)

    def context_text(self) -> str:
        if not self.resources:
            return ""
        parts = ["MCP resources the user attached to this message (read before the turn):"]
        for resource in self.resources:
            parts.append(f"<resource ref={resource.ref!r}>\n{resource.text}\n</resource>")
        return "\n\n".join(parts)


class MCPCellHook(TurnHook):
    """Adds the attached resources to each request of the turn (``kind`` ``hook``: fresh
    context, never history) and hands the turn to the notebook's sampler."""

    name = "mcp"

    def __init__(self, inputs: MCPCellInputs | None, sampling_turn: Any = None) -> None:
        self.inputs = inputs
        self.sampling_turn = sampling_turn

    def turn_start(self, ctx: Any) -> None:
        if self.sampling_turn is not None:
            self.sampling_turn.ctx = ctx  # its emit, for the sampling approval card

    def context_layers(self, ctx: Any) -> Sequence[ContextLayer]:
        text = self.inputs.context_text() if self.inputs is not None else ""
        return (ContextLayer.fixed("hook", text),) if text else ()


def cell_inputs(magics: Any, args: Any, body: str) -> MCPCellInputs | None:
    """The cell's ``--resource`` texts and ``--mcp-prompt`` text (None: the cell uses neither).
    Raises a one-line UsageError before the turn when one cannot be had."""
    if args.arg and not args.mcp_prompt:
        raise UsageError("%%agent: --arg gives an argument of --mcp-prompt SERVER:NAME; add that flag")
    if not args.resource and not args.mcp_prompt:
        return None
    from ..mcp.manager import kernel_manager
    from .subcommands.mcp_catalog import config_file

    manager = kernel_manager()
    config = config_file(magics)
    manager.tools(config, report=print)  # starts the servers (a turn does the same next)
    prompt = body
    if args.mcp_prompt:
        prompt = _prompt_text(magics, manager, config, args.mcp_prompt, args.arg, body)
    return MCPCellInputs(prompt, [_read(magics, manager, ref) for ref in args.resource])


def _read(magics: Any, manager: Any, ref: str) -> AttachedResource:
    from ..agent.images import ToolResult
    from ..agent.tools import ToolError
    from .subcommands.mcp_catalog import check_server, split_ref

    server, uri = split_ref(ref, "a resource", "%%agent --resource")
    check_server(magics, server, "%%agent --resource")
    try:
        content = manager.read_resource(server, uri)
    except ToolError as exc:
        raise UsageError(f"%%agent --resource {ref}: {exc} (the turn did not run)") from None
    text = content.text if isinstance(content, ToolResult) else str(content)
    if len(text) > RESOURCE_CHARS:
        text = text[:RESOURCE_CHARS] + f"\n[… {len(text) - RESOURCE_CHARS} more characters left out]"
    return AttachedResource(ref, text)


def parse_arguments(pairs: list[str]) -> dict[str, str]:
    """``--arg KEY=VALUE`` pairs (a value may hold ``=``); a pair without ``=`` is an error."""
    arguments: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"%%agent --arg: give KEY=VALUE, got {pair!r}")
        if key.strip() in arguments:
            raise UsageError(f"%%agent --arg: {key.strip()!r} is given twice")
        arguments[key.strip()] = value
    return arguments


def _prompt_text(magics: Any, manager: Any, config: Any, ref: str, pairs: list[str], body: str) -> str:
    from ..agent.tools import ToolError
    from .subcommands.mcp_catalog import check_server, split_ref

    server, name = split_ref(ref, "a prompt", "%%agent --mcp-prompt")
    check_server(magics, server, "%%agent --mcp-prompt")
    arguments = parse_arguments(pairs)
    listed = [p for p in manager.prompts(config, report=None) if p.server == server and p.name == name]
    if not listed:
        raise UsageError(f"%%agent --mcp-prompt: server {server!r} has no prompt {name!r} (%agent mcp prompts {server})")
    known = {a.name for a in listed[0].arguments}
    missing = [a.name for a in listed[0].arguments if a.required and a.name not in arguments]
    unknown = [k for k in arguments if k not in known]
    if missing:
        given = " ".join(f"--arg {m}=VALUE" for m in missing)
        raise UsageError(f"%%agent --mcp-prompt {ref}: missing required argument{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(missing)} (add {given})")
    if unknown:
        raise UsageError(f"%%agent --mcp-prompt {ref}: unknown argument {', '.join(map(repr, unknown))}; "
                         f"it takes: {', '.join(sorted(known)) or 'none'}")
    try:
        messages = manager.get_prompt(server, name, arguments)
    except ToolError as exc:
        raise UsageError(f"%%agent --mcp-prompt {ref}: {exc} (the turn did not run)") from None
    return prompt_from_messages(messages, body)


def prompt_from_messages(messages: Sequence[tuple[str, str]], body: str = "") -> str:
    """The prompt's messages as the turn's user text, then the cell's body.

    Only user messages: their texts, a blank line apart. A prompt that also scripts the
    assistant's side gets each message labelled with its role, in order, so the model reads
    the exchange as the server wrote it (a turn starts from one user message).
    """
    texts = [(role, text.strip()) for role, text in messages if text.strip()]
    if all(role == "user" for role, _ in texts):
        parts = [text for _, text in texts]
    else:
        parts = [f"{role.capitalize()}: {text}" for role, text in texts]
    if body.strip():
        parts.append(body.strip())
    prompt = "\n\n".join(parts)
    if not prompt:
        raise UsageError("%%agent --mcp-prompt: the prompt has no text, and the cell body is empty")
    return prompt
