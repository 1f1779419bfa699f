"""What a turn takes from its harness, handed over once when it is built.

The loop reads these values and never calls back into ``AgentHarness``: pricing is the
one service it is given (``price``), as a plain callable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...foundation.tokens import TokenCounter
from ...providers.base import LLMProvider
from ..callbacks import AgentCallbacks
from ..context import ContextWarningTracker
from ..events import EventLog
from ..executor import BoundedToolExecutor
from ..harness_settings import HarnessSettings
from ..hooks import Integration
from ..provenance import PromptProvenance
from ..redact import Redactor
from ..reflection import ReflectionEngine
from ..thinking import ThinkingManager
from .retry import RetryPolicy

# price(usage, turn_id, provider=None, thinking_phase=False) -> the call's cost (None: unknown)
Price = Callable[..., float | None]


@dataclass(frozen=True)
class TurnSetup:
    """One turn's collaborators and settings (the harness's, at the time the turn starts)."""

    settings: HarnessSettings
    provider: LLMProvider
    event_log: EventLog | None
    callbacks: AgentCallbacks
    thinking: ThinkingManager
    reflection: ReflectionEngine
    retry: RetryPolicy
    redactor: Redactor | None
    counter: TokenCounter
    context: ContextWarningTracker
    context_budget: int
    system_prompt: str
    provenance: PromptProvenance  # as rendered for ``system_prompt``
    run_context: dict[str, Any]
    workspace: Callable[[], str] | None
    executor: BoundedToolExecutor
    approval_timeout_s: float
    price: Price
    integrations: Sequence[Integration] = ()
