"""The context pack (``run_turn(top_k=...)``): workspace passages retrieved for a turn.

``scan`` picks the files, ``chunks`` cuts them into anchored passages, ``index`` keeps a
fresh BM25 index per folder, ``pack`` makes the turn's layer, event and JSON.
"""

from .chunks import Passage
from .index import RefreshStats, ScoredPassage, WorkspaceIndex, index_for
from .pack import ContextPack, build_context_pack, context_pack_layers

__all__ = ["ContextPack", "Passage", "RefreshStats", "ScoredPassage", "WorkspaceIndex", "build_context_pack",
           "context_pack_layers", "index_for"]
