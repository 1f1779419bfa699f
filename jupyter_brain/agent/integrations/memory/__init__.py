"""Memory in a turn: recall at its start, extraction after it (on ``agent/memory``)."""

from .hook import MemoryIntegration

__all__ = ["MemoryIntegration"]
