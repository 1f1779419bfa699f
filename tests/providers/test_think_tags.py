"""ThinkTagSplitter: inline <think> reasoning split from answer text, chunking-proof."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_brain.providers.think_tags import ThinkTagSplitter


def run(chunks: list[str]) -> list[tuple[str, str]]:
    """Feed chunks, finish, and merge adjacent same-kind segments for comparison."""
    splitter = ThinkTagSplitter()
    raw = [seg for c in chunks for seg in splitter.feed(c)] + splitter.finish()
    merged: list[tuple[str, str]] = []
    for kind, text in raw:
        if merged and kind != "thinking_end" and merged[-1][0] == kind:
            merged[-1] = (kind, merged[-1][1] + text)
        else:
            merged.append((kind, text))
    return merged


def reference(s: str) -> list[tuple[str, str]]:
    """Whole-string oracle: the same rules, without any streaming."""
    out: list[tuple[str, str]] = []
    inside, strip = False, False
    while True:
        tag = "</think>" if inside else "<think>"
        pos = s.find(tag)
        part = s if pos < 0 else s[:pos]
        if strip:
            part = part.lstrip()
            strip = not part
        if part:
            out.append(("thinking" if inside else "text", part))
        if pos < 0:
            break
        s = s[pos + len(tag) :]
        if inside:
            out.append(("thinking_end", ""))
        inside, strip = not inside, True
    if inside:
        out.append(("thinking_end", ""))
    return out


def test_plain_text_passes_through() -> None:
    assert run(["Hello ", "world"]) == [("text", "Hello world")]


def test_think_block_becomes_thinking_then_text() -> None:
    assert run(["<think>\nweigh options\n</think>\n\nAnswer: 4"]) == [
        ("thinking", "weigh options\n"),
        ("thinking_end", ""),
        ("text", "Answer: 4"),
    ]


def test_tags_split_across_chunks() -> None:
    chunks = ["<th", "ink>I am thin", "king</thi", "nk>The answer"]
    assert run(chunks) == [
        ("thinking", "I am thinking"),
        ("thinking_end", ""),
        ("text", "The answer"),
    ]


def test_text_is_released_without_waiting_for_more_input() -> None:
    splitter = ThinkTagSplitter()
    assert splitter.feed("Hello <") == [("text", "Hello ")]  # only "<" is held back
    assert splitter.feed("b>") == [("text", "<b>")]
    assert splitter.feed("<think>deep") == [("thinking", "deep")]
    assert splitter.inside


def test_every_split_point_of_a_fixed_stream() -> None:
    s = "pre <think> a < b </think> post </think> <thin"
    whole = run([s])
    for i in range(len(s) + 1):
        for j in range(i, len(s) + 1):
            assert run([s[:i], s[i:j], s[j:]]) == whole, (i, j)
    assert whole == reference(s)


def test_unclosed_block_is_closed_at_finish() -> None:
    assert run(["<think>still going"]) == [("thinking", "still going"), ("thinking_end", "")]


def test_stray_close_tag_is_literal_text() -> None:
    assert run(["a </think> b"]) == [("text", "a </think> b")]


def test_empty_think_block_still_signals_end() -> None:
    assert run(["<think>\n\n</think>\n\nHi"]) == [("thinking_end", ""), ("text", "Hi")]


pieces = st.lists(
    st.sampled_from(["<think>", "</think>", "<", "<th", "ink>", "</", "a", "b c", "\n", " ", ">"]),
    max_size=25,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=pieces, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_any_chunking_gives_the_same_segments(text: str, cuts: list[int]) -> None:
    bounds = sorted({min(c, len(text)) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)])]
    assert run(chunks) == run([text]) == reference(text)
