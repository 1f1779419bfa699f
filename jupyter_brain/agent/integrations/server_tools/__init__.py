"""The provider's own tool calls (server tools) on the turn's timeline."""

from .hook import ServerToolsIntegration

__all__ = ["ServerToolsIntegration"]
