"""The event schema: the one stream every view (widget, text, log) is derived from.

Each event is a small pydantic model with a ``type`` tag, so the whole stream is
JSON-serialisable, replayable from SQLite, and its JSON schema generates the
front-end's TypeScript types (``jupyter_brain.widgets._schema``).
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

TurnStatus = Literal[
    "completed",  # the model gave its answer
    "max_steps",  # step budget used up
    "timeout",  # deadline passed
    "strategy_limit",  # the reasoning strategy's own step/reflection limit
    "error",  # provider error ended the turn
    "interrupted",  # Ctrl-C / kernel interrupt / cancellation
    "refused",  # the model declined to answer (stop_reason "refusal")
    "budget",  # a cost or token cap: the next model call could have crossed it, so it was not made
]

# "truncated": the model's output limit cut the call's arguments off; it was never run.
ToolStatus = Literal["ok", "error", "timeout", "denied", "blocked", "invalid", "interrupted", "truncated"]


class EventBase(BaseModel):
    # Each event type builds its validator on first use, not at import: a turn's first word
    # needs a handful of the ~30 types (#40).
    model_config = ConfigDict(extra="forbid", defer_build=True)

    session_id: str = ""
    turn_id: str = ""
    seq: int = 0  # position within the turn, set by the emitter
    ts: float = Field(default_factory=time.time)


class TurnStart(EventBase):
    type: Literal["turn_start"] = "turn_start"
    user_message: str
    provider: str = ""
    model: str = ""
    think_level: str = "off"
    strategy: str | None = None
    max_steps: int = 0
    timeout_s: float = 0
    reflect_every: int = 0
    # Prompt provenance (prompt_id, prompt_version, prompt_tags, prompt_engine,
    # prompt_render_hash, prompt_variables) and the harness's run_context_metadata.
    prompt: dict[str, Any] | None = None
    run_context: dict[str, Any] | None = None
    turn_number: int = 0  # the turn's place in its session (1 = first) where a view was told it; 0: not known


class StepStart(EventBase):
    type: Literal["step_start"] = "step_start"
    step: int


class TextDelta(EventBase):
    type: Literal["text_delta"] = "text_delta"
    step: int
    text: str


class ThinkingDelta(EventBase):
    type: Literal["thinking_delta"] = "thinking_delta"
    step: int
    text: str


class ThinkingEnd(EventBase):
    """A thinking block is complete: views collapse it."""

    type: Literal["thinking_end"] = "thinking_end"
    step: int


class ToolCallStart(EventBase):
    type: Literal["tool_call_start"] = "tool_call_start"
    step: int
    call_id: str
    name: str
    # A call the provider ran on its own servers (a server tool): shown, never run or
    # answered by the harness.
    by_server: bool = False


class ToolCallArgsDelta(EventBase):
    """A fragment of streamed argument JSON, for live display while the model types it."""

    type: Literal["tool_call_args_delta"] = "tool_call_args_delta"
    step: int
    call_id: str
    delta: str


class ToolCallArgs(EventBase):
    """The complete arguments, once known (after any repair), just before execution."""

    type: Literal["tool_call_args"] = "tool_call_args"
    step: int
    call_id: str
    name: str
    arguments: Any = None
    wave: int = 0
    repaired: bool = False


class ToolCallEnd(EventBase):
    type: Literal["tool_call_end"] = "tool_call_end"
    step: int
    call_id: str
    name: str
    status: ToolStatus
    duration_ms: float = 0.0
    wave: int = 0
    result_preview: str = ""
    artifact: str | None = None  # handle of the full output when it was too large
    error: str | None = None
    # Figures the tool returned, for the view's <img>: small data:image/* URLs (downscaled
    # by the harness), never raw bytes in other text fields.
    images: list[str] = Field(default_factory=list)
    # Rich display outputs of the call (a DataFrame's HTML table, Markdown, a displayed
    # image): plain {"mime_type", "data", "role"} dicts, size-capped by the tool; "role"
    # is "value" (the last expression's value) or "display" (a display() call).
    outputs: list[dict[str, str]] = Field(default_factory=list)


class ReflectionEvent(EventBase):
    type: Literal["reflection"] = "reflection"
    step: int
    reflection: str
    confidence: float = 0.7
    trigger: Literal["periodic", "tool_error", "uncertainty"] = "periodic"
    suggested_action: str | None = None
    skipped: bool = False  # a budget/deadline stub, no model call was made


class StrategyStepEvent(EventBase):
    type: Literal["strategy_step"] = "strategy_step"
    step: int
    strategy: str
    data: dict[str, Any]  # a StrategyStep as its dict (kind + fields)


class UsageEvent(EventBase):
    type: Literal["usage"] = "usage"
    step: int
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float | None = None
    usage_estimated: bool = False  # the server reported none: counted with the tokenizer
    # "" for the turn's own model calls; else what made the call, e.g. "sampling for MCP server 'x'"
    # (counted in the turn's totals all the same)
    label: str = ""
    call_id: str | None = None  # the tool call it was made for, if any


class ToolProgress(EventBase):
    """A running tool's progress (an MCP server's progress notification), for its timeline row."""

    type: Literal["tool_progress"] = "tool_progress"
    step: int = 0
    call_id: str
    progress: float
    total: float | None = None
    message: str | None = None


class ServerLog(EventBase):
    """A log line an MCP server sent (``notifications/message``); ``call_id`` when it came
    during that tool call."""

    type: Literal["server_log"] = "server_log"
    step: int = 0
    call_id: str | None = None
    server: str
    level: str  # the protocol's: debug info notice warning error critical alert emergency
    logger: str | None = None
    message: str


class RetryEvent(EventBase):
    """A model call failed transiently and is tried again: views discard what the failed
    attempt streamed in this step (it is not in the history)."""

    type: Literal["retry"] = "retry"
    step: int
    attempt: int  # the attempt about to start (2 = the first retry)
    max_attempts: int
    reason: str  # the error kind, e.g. "overloaded"
    message: str = ""
    delay_s: float = 0.0


class ErrorEvent(EventBase):
    type: Literal["error"] = "error"
    step: int = 0
    kind: str
    message: str
    recoverable: bool = True


class StepEnd(EventBase):
    type: Literal["step_end"] = "step_end"
    step: int
    stop_reason: str = ""
    tool_calls: int = 0
    stop_reason_inferred: bool = False  # the server sent none (tinyq4): guessed from the length


class CompactionEvent(EventBase):
    type: Literal["compaction"] = "compaction"
    step: int = 0
    strategy: str
    tokens_before: int
    tokens_after: int
    messages_before: int = 0
    messages_after: int = 0
    budget_tokens: int = 0
    fallback: str | None = None  # why another strategy did the work (e.g. summary failed)


class ThinkingPhaseEvent(EventBase):
    """A thinking phase between tool cycles (``agent/thinking_phase``): the task's state,
    and the history tokens before and after it. ``fallback`` says what fell back."""

    type: Literal["thinking_phase"] = "thinking_phase"
    step: int = 0
    strategy: str = ""
    summary: str = ""
    current_state: str = ""
    insights: list[str] = Field(default_factory=list)
    next_actions: str = ""
    tokens_before: int = 0
    tokens_after: int = 0
    thinking_tokens: int = 0  # the thinking model's input + output
    model_calls: int = 0
    duration_ms: float = 0.0
    fallback: str | None = None


class ContextWarning(EventBase):
    """The request crossed a context threshold (either way), measured before sending."""

    type: Literal["context_warning"] = "context_warning"
    step: int = 0
    level: Literal["ok", "warning", "critical"]
    previous: Literal["ok", "warning", "critical"] = "ok"
    tokens: int
    window: int


class BudgetWarning(EventBase):
    """A budget cap is mostly used (``warn_at``, 80 %): ``spent`` of ``cap`` (USD or tokens)
    for this turn, the session or a comparison's runs together; shown once per cap."""

    type: Literal["budget_warning"] = "budget_warning"
    step: int = 0
    scope: Literal["turn", "tokens", "session", "comparison"]
    unit: Literal["usd", "tokens"] = "usd"
    spent: float
    cap: float
    message: str = ""


class ApprovalRequest(EventBase):
    """A tool call waits for the user's decision (permission mode ``ask``)."""

    type: Literal["approval_request"] = "approval_request"
    step: int = 0
    call_id: str
    name: str
    effect: str = "execute"
    arguments: Any = None
    preview: dict[str, Any] | None = None  # e.g. {"path", "diff", "new_file", "summary"}
    timeout_s: float = 0


class ApprovalDecision(EventBase):
    type: Literal["approval_decision"] = "approval_decision"
    step: int = 0
    call_id: str
    approved: bool
    by: Literal["user", "timeout", "no_frontend", "policy", "error"] = "user"
    channel: str = ""  # "widget", "stdin", ...
    waited_ms: float = 0.0
    action: str = ""  # an MCP elicitation's answer: accept, decline or cancel ("" for a tool's approval)


class MemoryRecall(EventBase):
    """Memories recalled for this turn (rendered into its requests, never into history)."""

    type: Literal["memory_recall"] = "memory_recall"
    step: int = 0
    memories: list[dict[str, Any]] = Field(default_factory=list)  # {id, text, source, score}


class ContextPackEvent(EventBase):
    """Workspace passages retrieved for this turn (``top_k``)."""

    type: Literal["context_pack"] = "context_pack"
    step: int = 0
    query: str = ""
    passages: list[dict[str, Any]] = Field(default_factory=list)  # {anchor, text, score}


class ProviderFallback(EventBase):
    """A provider chain moved a step to its next provider after a retryable failure."""

    type: Literal["provider_fallback"] = "provider_fallback"
    step: int = 0
    failed: str  # "anthropic:claude-…"
    next: str
    kind: str = "other"  # the failure's ProviderError kind
    message: str = ""


class Citations(EventBase):
    """The sources of the answer: workspace anchors and web pages."""

    type: Literal["citations"] = "citations"
    step: int = 0
    local: list[str] = Field(default_factory=list)
    web: list[dict[str, str]] = Field(default_factory=list)


class RecordedUsage(BaseModel):
    """What a replayed turn's calls cost when they were recorded (issue #39): shown beside the
    turn's own figures (a replayed call costs nothing now), never added to them."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float | None = None  # at the recorded model's price; None: the catalogue has none
    calls: int = 0  # the replayed calls


class TurnEnd(EventBase):
    type: Literal["turn_end"] = "turn_end"
    status: TurnStatus
    text: str
    steps: int = 0
    tool_calls: int = 0
    reflections: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float | None = None
    duration_ms: float = 0.0
    usage_estimated: bool = False  # some of the turn's usage was estimated locally
    recorded: RecordedUsage | None = None  # a (partly) replayed turn: what the replayed calls cost when recorded


Event = Annotated[
    TurnStart
    | StepStart
    | TextDelta
    | ThinkingDelta
    | ThinkingEnd
    | ToolCallStart
    | ToolCallArgsDelta
    | ToolCallArgs
    | ToolCallEnd
    | ReflectionEvent
    | StrategyStepEvent
    | UsageEvent
    | ToolProgress
    | ServerLog
    | RetryEvent
    | ErrorEvent
    | StepEnd
    | CompactionEvent
    | ThinkingPhaseEvent
    | ContextWarning
    | BudgetWarning
    | ApprovalRequest
    | ApprovalDecision
    | MemoryRecall
    | ContextPackEvent
    | ProviderFallback
    | Citations
    | TurnEnd,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event, config=ConfigDict(defer_build=True))  # built on first use


def event_from_dict(data: dict[str, Any]) -> Event:
    return EVENT_ADAPTER.validate_python(data)


def event_json_schema() -> dict[str, Any]:
    """JSON schema of the event union; the front-end's TypeScript types come from it."""
    return EVENT_ADAPTER.json_schema()
