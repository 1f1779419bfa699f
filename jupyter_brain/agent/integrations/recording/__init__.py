"""A turn's recording in the event log, for replay (on ``providers/replay``)."""

from .hook import RECORD_KIND, RecordingIntegration

__all__ = ["RECORD_KIND", "RecordingIntegration"]
