"""Each turn's last request, kept in the event log (``%agent inspect`` of any kernel's turn)."""

from .hook import RequestLogIntegration

__all__ = ["RequestLogIntegration"]
