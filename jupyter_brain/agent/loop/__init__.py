"""The turn loop: one user message answered, read top to bottom.

``turn`` (the loop: steps, endings) → ``model_stream`` (one model call → events, tried
again by ``retry``; a provider chain's switches by ``fallbacks``) → ``tool_step`` (the
model's tool calls through the executor) → ``ending`` (how a turn that did not answer
says so). ``emitter`` stamps, masks and fans out every event; ``setup`` is what the
harness hands over. Integrations plug in through ``agent/hooks.py``;
nothing here imports one.
"""

from .emitter import EventEmitter
from .retry import RetryPolicy
from .setup import TurnSetup
from .turn import Turn

__all__ = ["EventEmitter", "RetryPolicy", "Turn", "TurnSetup"]
