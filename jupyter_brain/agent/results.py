"""What a turn hands back: its steps, tool calls, reflections, totals and the history.

Plain pydantic records, so a ``TurnResult`` can be stored, compared (``%%compare``) and
shown without the harness that made it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..providers.base import Usage
from .events import TurnStatus
from .reflection import ReflectionResult
from .strategies import AnyStep


class StepRecord(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validators built at a step's end, not at import (#40)

    step: int
    text: str = ""
    thinking: str = ""
    tool_calls: list[str] = Field(default_factory=list)  # call ids
    stop_reason: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    usage_estimated: bool = False  # the server reported no usage: counted with the tokenizer


class ToolCallRecord(BaseModel):
    model_config = ConfigDict(defer_build=True)

    call_id: str
    name: str
    arguments: Any = None
    status: str
    output: str = ""
    duration_ms: float = 0.0
    wave: int = 0
    step: int = 0
    artifact: str | None = None
    error: str | None = None
    images: list[str] = Field(default_factory=list)  # as on ToolCallEnd (data URLs)
    by_server: bool = False  # the provider ran it on its servers (a server tool), not the harness


class TurnResult(BaseModel):
    """What a turn produced, and the history to continue from (``messages``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    session_id: str
    turn_id: str
    status: TurnStatus
    text: str  # the answer only: a strategy's Final Answer without its labels and the steps around it
    raw_text: str = ""  # the last model text as written (labels and all); every step's text is in ``steps``
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float | None = None
    usage_estimated: bool = False  # some step's usage was estimated (see StepRecord)
    duration_s: float = 0.0
    steps: list[StepRecord] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    reflections: list[ReflectionResult] = Field(default_factory=list)
    strategy_steps: list[AnyStep] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    new_messages: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None
    system_prompt: str = ""  # as sent (base + strategy + thinking instructions)
    # The thinking phase (``agent/thinking_phase``), counted apart from the tokens above
    # (``cost_usd`` includes its cost): phases run, its model calls and their tokens, and
    # the history tokens it took out of the requests.
    thinking_phases: int = 0
    thinking_phase_calls: int = 0
    thinking_phase_input_tokens: int = 0
    thinking_phase_output_tokens: int = 0
    thinking_phase_cost_usd: float | None = 0.0
    thinking_phase_tokens_saved: int = 0
    # The reference design's integrations (all empty when they are not configured).
    local_citations: list[str] = Field(default_factory=list)  # workspace anchors: file:line, nb.ipynb#cell-3
    web_citations: list[dict[str, str]] = Field(default_factory=list)  # {"url", "title"}
    rendered_content_paths: list[str] = Field(default_factory=list)  # fetched pages saved as Markdown
    context_pack_json: dict[str, Any] | None = None  # the workspace passages sent (top_k)
    memories: list[dict[str, Any]] = Field(default_factory=list)  # memories recalled for this turn
    prompt_render_hash: str = ""  # sha256 of the system prompt as rendered for this turn
    providers_used: list[str] = Field(default_factory=list)  # a provider chain: who answered each step
    recorded_usage: dict[str, Any] | None = None  # a replayed turn: its calls' tokens and cost when recorded
    replay: str = ""  # replayed, partly replayed, stopped or live: a notebook turn's recording (issue #24)

    # The last request as sent (``request_snapshot()``); not part of the dumped result.
    _request: Any = PrivateAttr(default=None)
    # How to write this turn as a test (``to_test()``): set by the notebook cell that ran it,
    # which knows its flags, setup and recording; None elsewhere.
    _export: Any = PrivateAttr(default=None)

    def __str__(self) -> str:
        return self.text

    def request_snapshot(self) -> Any:
        """The turn's last request, part by part with token counts and keys masked
        (a ``RequestSnapshot``), or None when the turn sent none."""
        return None if self._request is None else self._request.snapshot()

    def to_test(self, path: Any = None, *, live: bool = False, checks: Any = None) -> Any:
        """Write this turn as a pytest file that replays its recording (or, ``live``, asks the
        model) and asserts ``checks`` (``{"expect": [...], "check": [...]}`` or a list of
        ``--check`` expressions; none: the recorded answer). Returns the file's path. Only a
        ``%%agent`` cell's turn knows its cell and recording (``%agent export-test`` too)."""
        if self._export is None:
            raise ValueError("this turn cannot be written as a test: only a %%agent cell's turn that called a "
                             "model has a recording to replay")
        return self._export.write(path, live=live, checks=checks)

    def __repr__(self) -> str:
        return (
            f"TurnResult(status={self.status!r}, steps={len(self.steps)}, "
            f"tool_calls={len(self.tool_calls)}, text={clip(self.text, 60)!r})"
        )

    @property
    def usage(self) -> Usage:
        return Usage(**{name: getattr(self, name) for name in Usage.model_fields}, estimated=self.usage_estimated)


def clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
