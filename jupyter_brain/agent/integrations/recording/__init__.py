"""A turn's recording in the event log, for replay (on ``providers/replay``)."""

from .hook import RecordingIntegration

__all__ = ["RecordingIntegration"]
