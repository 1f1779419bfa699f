"""Context that stays bounded: how full the window is, compaction, summaries, tool selection.

Everything here works on neutral messages (``providers/base.py``) and knows nothing of
IPython or widgets. The modules:

- ``levels``: context levels (``ContextWarningTracker``) and their crossings
- ``search``: BM25 tokenizing and scoring
- ``compaction``: the result, the budget pass and the ``CompactionStrategy`` base
- ``compactors``: ``TokenBudget``, ``SlidingWindowSummary``, ``SemanticRelevance`` by name
- ``summary``: the summary instruction, transcript and provider-backed summarizer
- ``selection``: ``select_tools``
- ``fitting``: each request of a turn built, measured and compacted (``ContextFitter``)

Token counting and model windows live below the agent, in ``jupyter_brain.foundation``; they
and the workspace names are re-exported here so the old ``agent.context`` imports keep working.
"""

from __future__ import annotations

from ...foundation.catalog import CONTEXT_WINDOWS, DEFAULT_CONTEXT_WINDOW, context_window_for
from ...foundation.tokens import (
    ENCODING_NAME,
    MESSAGE_OVERHEAD_TOKENS,
    TOOL_CALL_OVERHEAD_TOKENS,
    TOOL_SCHEMA_OVERHEAD_TOKENS,
    TokenCounter,
    ToolSchema,
    text_of,
)
from ...foundation.tokens import _get_encoding as _get_encoding
from ..history import Message
from ..workspace import Workspace, WorkspaceSection
from .compaction import (
    CLEARED_PREFIX,
    OMITTED_NOTE,
    SUMMARY_HEADER,
    CompactionResult,
    CompactionStrategy,
    Summarizer,
    omitted_marker,
    summary_message,
)
from .compaction import _Budget as _Budget
from .compaction import _budget_pass as _budget_pass
from .compaction import _is_summary as _is_summary
from .compaction import _render_args as _render_args
from .compactors import _STRATEGIES as _STRATEGIES
from .compactors import SemanticRelevance, SlidingWindowSummary, TokenBudget, compaction_strategy
from .levels import ContextLevelChange, ContextWarningTracker, Level
from .search import bm25_scores, tokenize
from .selection import select_tools
from .summary import SUMMARY_INSTRUCTION, provider_summarizer, summary_request
from .summary import _transcript as _transcript

# Private names of the old single module, still importable from here.
_text_of = text_of
_WINDOWS: tuple[tuple[str, int], ...] = tuple(CONTEXT_WINDOWS.items())

__all__ = [
    "CLEARED_PREFIX",
    "DEFAULT_CONTEXT_WINDOW",
    "ENCODING_NAME",
    "MESSAGE_OVERHEAD_TOKENS",
    "OMITTED_NOTE",
    "SUMMARY_HEADER",
    "SUMMARY_INSTRUCTION",
    "TOOL_CALL_OVERHEAD_TOKENS",
    "TOOL_SCHEMA_OVERHEAD_TOKENS",
    "CompactionResult",
    "CompactionStrategy",
    "ContextLevelChange",
    "ContextWarningTracker",
    "Level",
    "Message",
    "SemanticRelevance",
    "SlidingWindowSummary",
    "Summarizer",
    "TokenBudget",
    "TokenCounter",
    "ToolSchema",
    "Workspace",
    "WorkspaceSection",
    "bm25_scores",
    "compaction_strategy",
    "context_window_for",
    "omitted_marker",
    "provider_summarizer",
    "select_tools",
    "summary_message",
    "summary_request",
    "tokenize",
]

