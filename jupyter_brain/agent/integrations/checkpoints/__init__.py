"""Checkpoints in a turn: the write tools' snapshots are attributed to the running turn."""

from .hook import CheckpointsIntegration

__all__ = ["CheckpointsIntegration"]
