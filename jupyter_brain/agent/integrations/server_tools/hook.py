"""The calls a provider ran on its own servers, shown as tool rows of the step.

Anthropic's server tools (web search, tool search, code execution, its MCP connector) run
inside one model call; the answer only tells what ran and what came back
(``ProviderResult.server_tools``). Each becomes a timeline row like our own calls —
name, input, a summary of the result — marked ``by_server``: the harness never runs it,
never answers it with a tool result (its blocks go back in the assistant message as the
API sent them), and the row says whose server ran it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ....providers.base import ProviderResult, ServerToolUse
from ...events import ToolCallArgs, ToolCallEnd, ToolCallStart
from ...hooks import TurnContext, TurnHook
from ...results import ToolCallRecord


@dataclass(frozen=True)
class ServerToolsIntegration:
    name: ClassVar[str] = "server tools"

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        return ServerToolsHook()


class ServerToolsHook(TurnHook):
    name = "server tools"

    def after_model_call(self, ctx: TurnContext, step: int, result: ProviderResult) -> ProviderResult:
        for use in result.server_tools:
            show(ctx, use, step)
        return result


def show(ctx: TurnContext, use: ServerToolUse, step: int) -> None:
    """One server call as a row: started, its input, ended with its result's summary."""
    status = "error" if use.error else "ok"
    ran_by = f"run by the provider's server ({ctx.provider_name})"
    preview = "" if use.error else f"{ran_by}: {use.summary or 'done'}"
    error = f"{ran_by} failed: {use.error}" if use.error else None
    ctx.emit(ToolCallStart(step=step, call_id=use.id, name=use.name, by_server=True))
    ctx.emit(ToolCallArgs(step=step, call_id=use.id, name=use.name, arguments=use.input))
    ctx.emit(ToolCallEnd(step=step, call_id=use.id, name=use.name, status=status, result_preview=preview, error=error))
    ctx.add_tool_call(ToolCallRecord(call_id=use.id, name=use.name, arguments=use.input, status=status,
                                     output=preview, step=step, error=use.error, by_server=True))
