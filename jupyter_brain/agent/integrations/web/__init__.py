"""Web search in a turn (``run_turn(web_mode="on")``), on the library in ``agent/web``."""

from .hook import WebIntegration

__all__ = ["WebIntegration"]
