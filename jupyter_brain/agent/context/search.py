"""Lexical relevance: BM25 over tokenized text (which old exchanges, which tools fit a query).

Kept free of message and compaction details so other parts (memory) can rank with it too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from", "has",
    "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or",
    "our", "so", "that", "the", "their", "then", "there", "these", "this", "to", "was", "we", "were",
    "what", "when", "which", "who", "will", "with", "you", "your",
))


def tokenize(text: str) -> list[str]:
    """Lowercased words, snake_case and camelCase split, common English words dropped."""
    return [w for w in _WORD.findall(_CAMEL.sub(" ", text).lower()) if w not in _STOPWORDS]


def bm25_scores(documents: Sequence[Sequence[str]], query: Sequence[str]) -> list[float]:
    """BM25 score of each tokenized document for the tokenized query (zeros when either is empty)."""
    if not documents:
        return []
    if not query or not any(documents):
        return [0.0] * len(documents)
    import bm25s  # numpy-backed; imported on first use to keep kernel start-up fast

    index = bm25s.BM25()
    index.index([list(d) for d in documents], show_progress=False)
    return [float(s) for s in index.get_scores(list(query))]
