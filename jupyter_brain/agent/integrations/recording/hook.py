"""Each turn's recording, kept where the next run finds it (issue #24).

The provider of a notebook turn is a ``ReplayingProvider``; it records every model call
(replayed or live) with its request's fingerprint. This plug-in writes that recording to
the event log (a ``recording`` record: cell key, session, turn) once the turn is over, and
says in ``TurnResult.replay`` whether the turn was replayed, and in ``recorded_usage`` what its
replayed calls cost when they were recorded (the view shows it; the turn's own figures, what
it spent now, stay zero for them). It also tells the provider
which tool calls ran (the turn's tool-call records, read once at the end rather than from
every event, so a streamed chunk does not pass through here), so the recording knows which
were allowed. Turns with another provider are not recorded (``for_turn`` returns None).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ....providers.replay import ReplayingProvider
from ...hooks import TurnContext, TurnHook
from ...results import TurnResult

RECORD_KIND = "recording"
NOT_RUN = frozenset({"denied", "blocked", "invalid", "truncated", "interrupted"})  # a tool call that did not run


class RecordingIntegration:
    name: ClassVar[str] = "recording"

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        provider = ctx.provider
        return RecordingHook(provider) if isinstance(provider, ReplayingProvider) else None


class RecordingHook(TurnHook):
    name = "recording"
    logger = "jupyter_brain.replay"

    def __init__(self, provider: ReplayingProvider) -> None:
        self.provider = provider

    def result_fields(self, ctx: TurnContext) -> Mapping[str, Any]:
        return {"replay": self.provider.state, "recorded_usage": self.provider.recorded_cost()}

    def after_turn(self, ctx: TurnContext, result: TurnResult) -> None:
        for call in result.tool_calls:
            if call.status not in NOT_RUN:
                self.provider.tool_ran(call.call_id)
        recording = self.provider.recording()
        if recording.calls:
            ctx.record(RECORD_KIND, {"cell": recording.cell, "turn_id": ctx.turn_id, "recording": recording.dump()})
