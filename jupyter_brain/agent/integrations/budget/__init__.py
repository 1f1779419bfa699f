"""Budget caps in a turn (``run_turn(budget=BudgetCaps(...))``), on ``agent/cost_caps``."""

from .hook import BudgetIntegration

__all__ = ["BudgetIntegration"]
