"""Runtime metadata and a skill's instructions as context layers of a turn."""

from .hook import RuntimeIntegration

__all__ = ["RuntimeIntegration"]
