"""Recorded turns that replay without calling the model (issue #24): a request's
fingerprint, a turn's recording, and the provider that answers from it."""

from .fingerprint import RequestFingerprint, fingerprint, what_changed
from .provider import REPLAYED, ReplayingProvider, ReplayMismatch, ReplayMode
from .recording import RecordedCall, TurnRecording, cell_key

__all__ = [
    "REPLAYED", "RecordedCall", "ReplayMismatch", "ReplayMode", "ReplayingProvider", "RequestFingerprint",
    "TurnRecording", "cell_key", "fingerprint", "what_changed",
]
