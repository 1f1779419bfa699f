"""Stand-in models for the example notebooks, one line to import.

Each ``*_model()`` is one notebook's model: ``"auto"`` (the real model picked from
ANTHROPIC_API_KEY, OPENAI_API_KEY or a local server's OPENAI_BASE_URL, as ``--provider auto``
does) when one is configured, and otherwise a ``ScriptedProvider`` whose replies are written
in these modules (a notebook with several sections gets one that picks each turn's script
by its prompt: ``_sections.py``). ``demo_setup(model)``, the notebook's one setup call, makes
it the kernel's default provider, so the ``%%agent`` cells carry no ``--provider``. Some replies read the real tool results from
the conversation, so the numbers in their answers are the ones computed in the notebook.
The notebooks stay runnable (and tested with nbval) offline.
"""

from ._base import DEFAULT_PROVIDER, demo_setup, live, temporary_data_dir
from ._sections import ScriptedByPrompt, Section
from .comparison import comparison_model
from .dataframes import dataframe_model
from .evals import eval_model
from .other import bounded_context_model, mcp_model, safety_model
from .quickstart import quickstart_model
from .reflection import reflection_model
from .sessions import fiscal_model
from .strategies import strategy_model
from .thinking import thinking_model

__all__ = [
    "DEFAULT_PROVIDER",
    "bounded_context_model",
    "ScriptedByPrompt",
    "Section",
    "comparison_model",
    "dataframe_model",
    "demo_setup",
    "eval_model",
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
