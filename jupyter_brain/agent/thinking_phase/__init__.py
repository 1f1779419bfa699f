"""The thinking phase between tool cycles (issue #17, the thinking-cycle proposal):
``ThinkingProcessor.perform_thinking`` → ``ThinkingResult``; the thinking phase integration
(``agent/integrations/thinking_phase``) runs it inside a turn. Off unless
``AgentHarness(thinking_phase=True)``."""

from __future__ import annotations

from .processor import THINKING_INSTRUCTION, ThinkingProcessor, ThinkingResult
from .state import THINKING_PREFIX, is_thinking_message

THINKING_STRATEGIES = ("summary", "token_budget", "semantic")

__all__ = [
    "THINKING_INSTRUCTION",
    "THINKING_PREFIX",
    "THINKING_STRATEGIES",
    "ThinkingProcessor",
    "ThinkingResult",
    "is_thinking_message",
]
