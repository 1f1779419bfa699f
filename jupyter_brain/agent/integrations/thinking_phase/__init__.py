"""The thinking phase in a turn (``AgentHarness(thinking_phase=True)``), on ``agent/thinking_phase``."""

from .hook import ThinkingPhaseIntegration

__all__ = ["ThinkingPhaseIntegration"]
