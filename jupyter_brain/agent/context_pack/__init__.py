"""The context pack (``run_turn(top_k=...)``): workspace passages retrieved for a turn.

``scan`` picks the files, ``chunks`` cuts them into anchored passages, ``index`` keeps a
fresh BM25 index per folder, ``pack`` makes a turn's pack: its text and JSON (the
context pack integration, ``agent/integrations/context_pack``, adds it to a turn).
"""

from .chunks import Passage
from .index import RefreshStats, ScoredPassage, WorkspaceIndex, index_for
from .pack import ContextPack, build_context_pack

__all__ = ["ContextPack", "Passage", "RefreshStats", "ScoredPassage", "WorkspaceIndex", "build_context_pack",
           "index_for"]
