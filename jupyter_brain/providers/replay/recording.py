"""A turn's recording: each model call's response and the fingerprint of its request.

Compact on purpose — it travels in the saved notebook (``metadata.jupyter_brain.recording``
of the agent's output) and in the event log (a ``recording`` record): responses only
(text, thinking, tool calls, usage, stop reason), never a request body. Secrets are masked
before a call is kept (``RecordedCall.of``, ``masked``): the notebook is shared.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...foundation.redact import redact_value
from ..base import Message, ProviderResult
from .fingerprint import RequestFingerprint, digest

FORMAT_VERSION = 1
ARGUMENTS_AS_WRITTEN = "arguments_json"  # a recorded tool call's arguments in the model's key order
CallKind = Literal["step", "reflection", "summary"]


def call_kind(messages: list[Message]) -> CallKind:
    """Which of a turn's model calls this is (they are replayed in the order they came)."""
    kinds = {m.get("kind") for m in messages if m.get("role") == "system"}
    if "reflection" in kinds:
        return "reflection"
    if "summary_request" in kinds:
        return "summary"
    return "step"


def cell_key(source: str) -> str:
    """The key of a cell's recordings: its source, whitespace at the ends aside."""
    return digest(source.strip(), 24)


class RecordedCall(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validators built on first use, not at import (#40)

    kind: CallKind = "step"
    fp: str
    parts: dict[str, Any] = Field(default_factory=dict)
    response: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, kind: CallKind, request: RequestFingerprint, result: ProviderResult,
           redact: Callable[[str], str] | None = None) -> RecordedCall:
        response = result.model_dump(mode="json", exclude_defaults=True)
        for call in response.get("tool_calls") or []:
            # The arguments in the model's order, as text: a saved notebook's JSON sorts the
            # keys of every object, and a replayed call would show them in another order.
            if isinstance(call.get("arguments"), dict) and len(call["arguments"]) > 1:
                call[ARGUMENTS_AS_WRITTEN] = json.dumps(call["arguments"], ensure_ascii=False)
        return cls(kind=kind, fp=request.value, parts=request.parts,
                   response=redact_value(response, redact) if redact is not None else response)

    def masked(self, redact: Callable[[str], str]) -> RecordedCall:
        """This call with its response masked (itself when nothing needed masking: a call
        replayed from a saved recording, or one recorded before masking existed)."""
        response = redact_value(self.response, redact)
        return self if response is self.response else self.model_copy(update={"response": response})

    def result(self) -> ProviderResult:
        result = ProviderResult.model_validate(self.response)
        for call, recorded in zip(result.tool_calls, self.response.get("tool_calls") or [], strict=False):
            written = recorded.get(ARGUMENTS_AS_WRITTEN) if isinstance(recorded, dict) else None
            if isinstance(written, str):
                try:
                    call.arguments = json.loads(written)
                except ValueError:
                    pass
        return result


class VersionedRecording(BaseModel):
    """A recording kept in a saved notebook and the event log: one format version, read back
    leniently (anything of another version, or not valid, is no recording at all)."""

    model_config = ConfigDict(defer_build=True)  # built on first use, not at import (#40)

    v: int = FORMAT_VERSION

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_defaults=True)

    @classmethod
    def load(cls, data: Any) -> Self | None:
        """A recording read back, or None for anything that is not one of this version."""
        if not isinstance(data, dict) or data.get("v", FORMAT_VERSION) != FORMAT_VERSION:
            return None
        try:
            return cls.model_validate(data)
        except ValidationError:
            return None


class TurnRecording(VersionedRecording):
    """Every model call of one ``%%agent`` turn, in order."""

    cell: str = ""  # cell_key of the cell's source
    provider: str = ""
    model: str = ""
    native_thinking: bool = False
    flags: dict[str, Any] = Field(default_factory=dict)
    calls: list[RecordedCall] = Field(default_factory=list)
    ran: list[str] = Field(default_factory=list)  # ids of the tool calls that ran (not denied, not blocked)
    answers: dict[str, Any] = Field(default_factory=dict)  # what the user answered a server (MCP elicitation), by question
