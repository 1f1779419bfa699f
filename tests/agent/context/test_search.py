"""BM25 tokenizing and scoring."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_brain.agent.context.search import bm25_scores, tokenize


def test_bm25_helpers() -> None:
    assert tokenize("read_file ReadFile the Revenue, Q3!") == ["read", "file", "read", "file", "revenue", "q3"]
    assert bm25_scores([], ["x"]) == []
    assert bm25_scores([[], []], ["x"]) == [0.0, 0.0]
    s = bm25_scores([["revenue", "growth"], ["plot"], []], ["revenue"])
    assert s[0] > 0 and s[1] == 0 and s[2] == 0


@settings(max_examples=200, deadline=None)
@given(
    documents=st.lists(st.lists(st.sampled_from([f"w{i}" for i in range(12)]), min_size=1, max_size=15),
                       min_size=1, max_size=12),
    query=st.lists(st.sampled_from([f"w{i}" for i in range(14)]), min_size=1, max_size=5),
)
def test_small_corpora_score_as_bm25s_does(documents, query):
    """Up to SMALL_CORPUS documents the scores are computed without bm25s (no numpy on a
    first turn); they are bm25s' own, to its float32 precision (w12, w13: in no document)."""
    import bm25s

    from jupyter_brain.agent.context.search import SMALL_CORPUS, bm25_scores

    assert len(documents) <= SMALL_CORPUS
    known = {w for d in documents for w in d}
    ours = bm25_scores(documents, query)
    if not known & set(query):
        assert ours == [0.0] * len(documents)
        return
    index = bm25s.BM25()
    index.index([list(d) for d in documents], show_progress=False)
    theirs = [float(s) for s in index.get_scores(list(query))]
    assert ours == pytest.approx(theirs, rel=1e-5, abs=1e-6)


def test_a_large_corpus_is_scored_by_bm25s():
    from jupyter_brain.agent.context.search import SMALL_CORPUS, bm25_scores

    documents = [["alpha", f"w{i}"] for i in range(SMALL_CORPUS + 1)]
    scores = bm25_scores(documents, ["w3"])
    assert scores[3] > 0 and scores.count(0.0) == SMALL_CORPUS
