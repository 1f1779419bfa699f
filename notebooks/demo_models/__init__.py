"""Stand-in models for the example notebooks, one line to import.

Each ``*_model()`` returns ``"auto"`` (so ``%%agent --provider model`` uses the real model
picked from ANTHROPIC_API_KEY, OPENAI_API_KEY or a local server's OPENAI_BASE_URL, as
``--provider auto`` does) when one is configured, and otherwise a ``ScriptedProvider``
whose replies are written in these modules. Some replies read the real tool results from
the conversation, so the numbers in their answers are the ones computed in the notebook.
The notebooks stay runnable (and tested with nbval) offline.
"""

from ._base import demo_setup, live, temporary_data_dir
from .comparison import comparison_followup_model, comparison_models
from .dataframes import dataframe_model
from .other import bounded_context_model, mcp_model, safety_model
from .quickstart import quickstart_model
from .reflection import reflection_model
from .sessions import fiscal_model
from .strategies import strategy_model
from .thinking import thinking_model

__all__ = [
    "bounded_context_model",
    "comparison_followup_model",
    "comparison_models",
    "dataframe_model",
    "demo_setup",
    "fiscal_model",
    "live",
    "mcp_model",
    "quickstart_model",
    "reflection_model",
    "safety_model",
    "strategy_model",
    "temporary_data_dir",
    "thinking_model",
]
