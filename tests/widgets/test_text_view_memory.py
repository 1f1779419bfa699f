"""The text view and the Markdown transcript show which memories a turn used."""

from __future__ import annotations

import io

from jupyter_brain.agent.events import MemoryRecall, TurnEnd, TurnStart
from jupyter_brain.widgets import TextView, events_to_markdown

MEMORIES = [{"id": "m1", "text": "revenue is in\nUS dollars", "source": "user", "score": 1.2},
            {"id": "m4", "text": "the fiscal year starts in April", "source": "turn:s/t", "score": 0.4}]


def _events() -> list:
    ids = {"session_id": "s", "turn_id": "t"}
    return [TurnStart(user_message="revenue?", **ids), MemoryRecall(memories=MEMORIES, **ids),
            TurnEnd(status="completed", text="In dollars.", **ids)]


def test_text_view_lists_the_memories_used() -> None:
    out = io.StringIO()
    view = TextView(out)
    for e in _events():
        view.handle(e)
    text = out.getvalue()
    assert "⌁ Memories used:\n    · [m1] revenue is in US dollars\n    · [m4] the fiscal year starts in April\n" in text


def test_markdown_transcript_lists_the_memories_used() -> None:
    md = events_to_markdown(_events())
    assert "**Memories used**\n\n- [m1] revenue is in US dollars\n- [m4] the fiscal year starts in April" in md
