"""The turn's last request, stored beside the event log when the turn ends.

A turn keeps its last request by reference (``TurnResult.request_snapshot()``), which
lasts as long as the kernel. This plug-in stores the snapshot — the parts, their token
counts, every string masked, images as a note — as a ``request`` record, so
``%agent inspect`` shows the turns of earlier kernels too. Most of its counting is
already done: the fitter counted the same messages for the turn's requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...hooks import TurnContext, TurnHook
from ...request_snapshot import REQUEST_RECORD, snapshot_record
from ...results import TurnResult


@dataclass(frozen=True)
class RequestLogIntegration:
    name: ClassVar[str] = "request log"

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        return RequestLogHook()


class RequestLogHook(TurnHook):
    name = "request log"
    logger = "jupyter_brain.request_log"

    def after_turn(self, ctx: TurnContext, result: TurnResult) -> None:
        snapshot = result.request_snapshot()
        if snapshot is not None:  # a turn that sent nothing has nothing to show
            ctx.record(REQUEST_RECORD, snapshot_record(snapshot))
