"""The context pack in a turn (``run_turn(top_k=N)``), on ``agent/context_pack``."""

from .hook import ContextPackIntegration

__all__ = ["ContextPackIntegration"]
