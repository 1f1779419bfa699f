"""jupyter-brain: an LLM agent that lives in the Jupyter kernel."""

from __future__ import annotations

__version__ = "0.1.0"
