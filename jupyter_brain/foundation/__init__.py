"""Pieces shared by the agent and the providers, below both: token counting and the model
catalogue. Nothing here imports anything else from ``jupyter_brain``, so ``providers/`` can
use it without depending on ``agent/``."""
