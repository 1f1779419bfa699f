"""Masking secrets: the agent's import path of ``foundation/redact.py`` (providers mask
their recordings with it too, and they may not import ``agent/``)."""

from ..foundation.redact import MASK, Redactor, redact, redact_value

__all__ = ["MASK", "Redactor", "redact", "redact_value"]
