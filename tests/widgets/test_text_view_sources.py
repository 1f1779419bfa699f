"""The text view and the Markdown transcript show a turn's context pack (one line) and its
citations after the answer."""

from __future__ import annotations

import io

from jupyter_brain.agent.events import Citations, ContextPackEvent, StepStart, TextDelta, TurnEnd, TurnStart
from jupyter_brain.widgets import TextView, events_to_markdown

PASSAGES = [{"anchor": f"f{i}.py:{i}", "path": f"f{i}.py", "text": "x", "score": 1.0} for i in range(1, 7)]
WEB = [{"url": "https://example.org/a", "title": "Example A"}]


def _turn(streamed: bool) -> list:
    answer = "Total is 10.\n\n**Sources**\n\n- `f1.py:1`\n- [Example A](https://example.org/a)"
    events = [TurnStart(user_message="q"), ContextPackEvent(query="q", passages=PASSAGES[:2]), StepStart(step=1)]
    if streamed:
        events.append(TextDelta(step=1, text="Total is 10."))
    return events + [Citations(step=1, local=["f1.py:1"], web=WEB), TurnEnd(status="completed", text=answer, steps=1)]


def test_the_context_pack_is_one_line_naming_its_anchors() -> None:
    out = io.StringIO()
    view = TextView(out)
    view.handle(ContextPackEvent(query="q", passages=PASSAGES))
    assert out.getvalue() == "  ▤ Context pack: 6 passages (f1.py:1, f2.py:2, f3.py:3, f4.py:4, …)\n"


def test_sources_follow_the_streamed_answer() -> None:
    out = io.StringIO()
    view = TextView(out)
    for e in _turn(streamed=True):
        view.handle(e)
    lines = out.getvalue().splitlines()
    assert "  ▤ Context pack: 2 passages (f1.py:1, f2.py:2)" in lines
    start = lines.index("Sources:")
    assert lines[start - 1] == "Total is 10."
    assert lines[start + 1:start + 3] == ["  - f1.py:1", "  - Example A — https://example.org/a"]


def test_an_unstreamed_answer_shows_its_sources_once() -> None:
    out = io.StringIO()
    view = TextView(out)
    for e in _turn(streamed=False):
        view.handle(e)
    text = out.getvalue()
    assert text.count("f1.py:1`") == 1 and "Sources:" not in text and "**Sources**" in text


def test_the_markdown_transcript_shows_pack_and_sources() -> None:
    md = events_to_markdown(_turn(streamed=True))
    assert "*Context pack: 2 passages (f1.py:1, f2.py:2)*" in md
    assert "Total is 10.\n\n**Sources**\n\n- `f1.py:1`\n- [Example A](https://example.org/a)" in md
    assert md.count("**Sources**") == 1
