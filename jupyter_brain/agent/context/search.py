"""Lexical relevance: BM25 over tokenized text (which old exchanges, which tools fit a query).

Kept free of message and compaction details so other parts (memory) can rank with it too.
"""

from __future__ import annotations

import math
import re
from collections import Counter
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


# Up to this many documents (the tools of a turn, a session's exchanges) the scores are
# computed here in plain Python: bm25s loads numpy (120-230 ms on a first turn), and a
# warm-up importing numpy in the background raced the user's own first `import pandas`.
SMALL_CORPUS = 256
K1, B = 1.5, 0.75  # bm25s' defaults (its "lucene" method): the two paths give the same scores


def bm25_scores(documents: Sequence[Sequence[str]], query: Sequence[str]) -> list[float]:
    """BM25 score of each tokenized document for the tokenized query (zeros when either is empty)."""
    if not documents:
        return []
    if not query or not any(documents):
        return [0.0] * len(documents)
    if len(documents) <= SMALL_CORPUS:
        return _lucene_scores(documents, query)
    import bm25s  # numpy-backed; imported on first use to keep kernel start-up fast

    index = bm25s.BM25()
    index.index([list(d) for d in documents], show_progress=False)
    return [float(s) for s in index.get_scores(list(query))]


def _lucene_scores(documents: Sequence[Sequence[str]], query: Sequence[str]) -> list[float]:
    """BM25 as bm25s computes it (Lucene's idf and term weight; a query word that no
    document has counts nothing; a repeated query word counts each time)."""
    counts = [Counter(d) for d in documents]
    lengths = [len(d) for d in documents]
    average = sum(lengths) / len(lengths)
    frequency = Counter(word for c in counts for word in c)
    n = len(documents)
    scores = [0.0] * n
    for word in query:
        df = frequency.get(word, 0)
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, c in enumerate(counts):
            tf = c.get(word, 0)
            if tf:
                scores[i] += idf * tf / (K1 * ((1 - B) + B * lengths[i] / average) + tf)
    return scores
