"""The notebook's answer to an MCP server's sampling request (``sampling/createMessage``).

A server may ask the client for a model completion. The kernel answers with the session's
provider, the one the running turn uses (between turns: the last turn's), under the
permission mode, treated like a tool that writes, because it spends the user's money:

* ``auto``: allowed;
* ``ask``: the turn's approval card (under the tool call that is waiting for the server),
  or its stdin prompt where no widget front-end answers; headless (nbconvert, papermill)
  it is refused at once, as a tool approval is. Between turns nobody can be asked: refused;
* ``read-only``: refused.

A refusal is ``SamplingRefused`` with a one-line reason; the server receives it as an
error and stays usable. The reply carries the call's usage, which the MCP client charges
to the tool call (so the turn's tokens, cost and cost cap count it); a completion made
outside any turn is recorded in the session's event log (a ``mcp_sampling`` record).
"""

from __future__ import annotations

import copy
import itertools
import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded with the first MCP request, not with the first cell
    from ..mcp.client_hooks import SamplingReply, SamplingRequest

SHOWN_CHARS = 600  # of each message, on the approval card
SAMPLING_TIMEOUT_S = 120.0
_ids = itertools.count(1)


@dataclass
class SamplingTurn:
    """The running cell's turn, as the sampler needs it (set by ``agent_cell``)."""

    permission: str
    approver: Any  # approver(call, spec, arguments) -> Approval | bool
    provider: Any  # the turn's provider (a ReplayingProvider: its live part answers)
    timeout_s: float = 300.0
    ctx: Any = None  # the turn's TurnContext (MCPCellHook.turn_start): its emit
    seen: list[str] = field(default_factory=list)


class NotebookSampler:
    """``MCPManager.set_sampler(sampler)``: one per kernel, told of each turn."""

    def __init__(self, magics: Any) -> None:
        self.magics = magics
        self._lock = threading.Lock()
        self._turn: SamplingTurn | None = None
        self._last_provider: Any = None

    def begin(self, turn: SamplingTurn) -> None:
        with self._lock:
            self._turn = turn
            self._last_provider = turn.provider

    def end(self, turn: SamplingTurn) -> None:
        with self._lock:
            if self._turn is turn:
                self._turn = None

    def __call__(self, request: SamplingRequest) -> SamplingReply:
        from ..mcp.client_hooks import SamplingRefused

        with self._lock:
            turn, provider = self._turn, self._last_provider
        permission = turn.permission if turn is not None else str(getattr(self.magics, "permission", "ask"))
        if permission == "read-only":
            raise SamplingRefused(f"sampling for MCP server '{request.server}' is refused in permission mode read-only")
        model = _live(provider)
        if model is None:
            raise SamplingRefused("no model to sample with: the notebook has run no %%agent turn with a live provider")
        if permission != "auto":
            if turn is None:
                raise SamplingRefused("sampling needs the user's approval, and no %%agent turn is running to ask in "
                                      "(permission mode auto allows it)")
            _approve(turn, request)
        reply = _complete(model, request)
        if turn is None:
            self._record(request, reply)
        return reply

    def _record(self, request: SamplingRequest, reply: SamplingReply) -> None:
        """A completion made between turns: kept in the session's event log."""
        try:
            session = self.magics.manager.current
            session.event_log.add_record("mcp_sampling", {
                "server": request.server, "provider": reply.provider, "model": reply.model,
                "input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens}, session_id=session.name)
        except Exception:  # noqa: BLE001 - the log is a record, never a reason to fail the reply
            pass


def _live(provider: Any) -> Any:
    """The provider that calls a model: a replaying provider's live one (None if it has none)."""
    if provider is None:
        return None
    return provider.live if hasattr(provider, "live") and hasattr(provider, "recording") else provider


def _approve(turn: SamplingTurn, request: SamplingRequest) -> None:
    """Ask like a tool approval: an ``approval_request`` event (the card), the approver, an
    ``approval_decision`` event; a denial raises ``SamplingRefused``."""
    from ..agent.events import ApprovalDecision, ApprovalRequest
    from ..agent.executor import Approval
    from ..agent.tool_context import current_tool_context
    from ..mcp.client_hooks import SamplingRefused
    from ..providers.base import ToolCall

    tool = current_tool_context()
    parent = request.call_id or (tool.call_id if tool is not None else None)
    step = tool.step if tool is not None else 0
    call_id = f"{parent or 'mcp'}~sampling{next(_ids)}"
    name = f"{request.server} sampling"
    arguments: dict[str, Any] = {
        "server": request.server,
        # one readable block for the card (a list of dicts shows as raw JSON there)
        "messages": "\n\n".join(f"{role}: {_clip(text)}" for role, text in request.messages),
        "max_tokens": request.max_tokens,
    }
    if request.system_prompt:
        arguments["system_prompt"] = _clip(request.system_prompt)
    emit = getattr(turn.ctx, "emit", None)
    if emit is not None:
        emit(ApprovalRequest(step=step, call_id=call_id, name=name, effect="sampling", arguments=arguments,
                             preview={"parent_call_id": parent, "summary": "a model completion the server asks for"},
                             timeout_s=turn.timeout_s))
    spec = _Spec(name)
    import time

    started = time.monotonic()
    try:
        with tool.waiting_for_user() if tool is not None else nullcontext():  # not the tool's time
            answer = Approval.of(turn.approver(ToolCall(id=call_id, name=name, arguments=arguments), spec, arguments))
    except Exception as exc:  # noqa: BLE001 - a failing prompt refuses, as for tools
        answer = Approval(False, by="error", reason=f"the approval prompt failed ({type(exc).__name__})")
    if emit is not None:
        emit(ApprovalDecision(step=step, call_id=call_id, approved=answer.approved,
                              by=answer.by if answer.by in ("user", "timeout", "no_frontend", "policy", "error") else "user",
                              channel=answer.channel, waited_ms=(time.monotonic() - started) * 1000))
    if not answer.approved:
        raise SamplingRefused(f"sampling for MCP server '{request.server}' was refused: {answer.denial_text()}")


@dataclass(frozen=True)
class _Spec:
    """What an approver reads of a tool's spec, for a sampling request."""

    name: str
    effect: str = "sampling"
    description: str = "a model completion an MCP server asks for"


def _clip(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + f"… ({len(text) - SHOWN_CHARS} more characters)"


def _messages(request: SamplingRequest) -> list[dict[str, Any]]:
    """The request as neutral messages: the system prompt, then user/assistant turns
    (consecutive ones of one role joined: providers want them alternating)."""
    messages: list[dict[str, Any]] = []
    if request.system_prompt:
        messages.append({"role": "system", "content": request.system_prompt})
    for role, text in request.messages:
        role = "assistant" if role == "assistant" else "user"
        if messages and messages[-1]["role"] == role:
            messages[-1] = {"role": role, "content": messages[-1]["content"] + "\n\n" + text}
        else:
            messages.append({"role": role, "content": text})
    return messages


def _limited(provider: Any, max_tokens: int) -> Any:
    """The provider with the server's ``maxTokens`` as its output limit, where it has one of
    its own (``max_tokens``: the Anthropic and OpenAI-compatible providers): a shallow copy,
    so the turn's provider and its client are untouched. The lower of the two applies."""
    if max_tokens <= 0 or not hasattr(provider, "max_tokens"):
        return provider
    own = provider.max_tokens
    if own is not None and (not isinstance(own, int) or own <= max_tokens):
        return provider
    limited = copy.copy(provider)
    limited.max_tokens = max_tokens
    return limited


def _complete(provider: Any, request: SamplingRequest) -> SamplingReply:
    """One model call; a failure is a refusal naming it (the server gets one line)."""
    from ..mcp.client_hooks import SamplingRefused, SamplingReply

    try:
        result = _limited(provider, request.max_tokens).generate(_messages(request), [], timeout_s=SAMPLING_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - the server gets one line, the turn goes on
        raise SamplingRefused(f"the model call failed ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None
    text = result.text
    stop = "endTurn"
    if result.stop_reason == "max_tokens":
        stop = "maxTokens"
    for sequence in request.stop_sequences:
        if sequence and sequence in text:
            text, stop = text[: text.index(sequence)], "stopSequence"
    return SamplingReply(text=text, model=str(result.model or getattr(provider, "model", "") or ""), stop_reason=stop,
                         provider=str(getattr(provider, "name", "") or ""), input_tokens=result.usage.input_tokens,
                         output_tokens=result.usage.output_tokens)


def sampling_approver(view: Any, timeout_s: float, *, headless: bool) -> Any:
    """The approver of sampling requests in a cell's turn: the card, as for tools. It runs
    on a worker thread, so it never pumps the kernel's messages (on ipykernel 7 the card's
    click reaches a subshell anyway) and asks on stdin only outside a kernel."""
    from .approval import NotebookApprover

    if headless:
        from .headless import HeadlessApprover

        return HeadlessApprover()
    return NotebookApprover(view if hasattr(view, "decision_for") else None, timeout_s=timeout_s,
                            stdin=_stdin_outside_kernel, pump=lambda: None)


def _stdin_outside_kernel(call: Any, spec: Any, arguments: Any) -> Any:
    """stdin where it is safe from this thread (terminal IPython); in a kernel, only the
    kernel's main thread may ask on stdin, so the request is refused, saying why."""
    from IPython import get_ipython

    from ..agent.executor import Approval
    from .approval import ask_on_stdin

    if threading.current_thread() is threading.main_thread() or getattr(get_ipython(), "kernel", None) is None:
        return ask_on_stdin(call, spec, arguments)
    return Approval(False, by="no_frontend", channel="stdin",
                    reason="no approval card answered, and a kernel cannot ask on stdin for a server's request "
                           "(permission mode auto allows sampling)")


_KERNEL_SAMPLER: NotebookSampler | None = None


def kernel_sampler(magics: Any) -> NotebookSampler:
    """The kernel's sampler. Where MCP servers are configured (``mcp.json``) it is installed
    on the kernel's MCP manager, with the roots set to the workspace folder; elsewhere
    nothing of MCP loads (the SDK waits for a configured server)."""
    global _KERNEL_SAMPLER
    from ..mcp.config import config_path

    if _KERNEL_SAMPLER is None or _KERNEL_SAMPLER.magics is not magics:
        _KERNEL_SAMPLER = NotebookSampler(magics)
    if config_path(str(getattr(magics, "data_dir", "") or ".jupyter_brain")).exists():
        from ..mcp.manager import kernel_manager

        manager = kernel_manager()
        manager.set_sampler(_KERNEL_SAMPLER)
        manager.set_roots([workspace_root(magics)])
    return _KERNEL_SAMPLER


def workspace_root(magics: Any) -> Any:
    """The workspace folder (``AgentMagics.workspace_dir``, else the working directory)."""
    import os
    from pathlib import Path

    folder = str(getattr(magics, "workspace_dir", "") or "")
    return Path(os.getcwd(), os.path.expanduser(folder)) if folder else Path(os.getcwd())
