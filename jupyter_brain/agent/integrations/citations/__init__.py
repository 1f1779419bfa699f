"""Citations in a turn (``run_turn(show_citations=True)``), on ``agent/citations.py``."""

from .hook import CitationsIntegration

__all__ = ["CitationsIntegration"]
