"""Budget caps: a turn (or a session, or a whole ``%%compare``) stops before the model call
that could cross its cost or token cap (issue #24). ``caps`` says what is capped,
``estimate`` what the next call could cost at most, ``ledger`` what a session spent
(from the event log, so across kernels), ``wording`` how a stop and a warning read.
The budget integration (``agent/integrations/budget``) applies them at every model call."""

from .caps import BudgetCaps, SharedBudget
from .estimate import DEFAULT_OUTPUT_TOKENS, CallEstimate, estimate_call
from .ledger import SessionSpending, session_spending

__all__ = [
    "DEFAULT_OUTPUT_TOKENS", "BudgetCaps", "CallEstimate", "SessionSpending", "SharedBudget", "estimate_call",
    "session_spending",
]
