"""BM25 tokenizing and scoring."""

from __future__ import annotations

from jupyter_brain.agent.context.search import bm25_scores, tokenize


def test_bm25_helpers() -> None:
    assert tokenize("read_file ReadFile the Revenue, Q3!") == ["read", "file", "read", "file", "revenue", "q3"]
    assert bm25_scores([], ["x"]) == []
    assert bm25_scores([[], []], ["x"]) == [0.0, 0.0]
    s = bm25_scores([["revenue", "growth"], ["plot"], []], ["revenue"])
    assert s[0] > 0 and s[1] == 0 and s[2] == 0
