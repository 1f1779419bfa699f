"""A tool's progress and an MCP server's log lines in the Python views: the text view
prints a few progress lines and the loud log lines, the Markdown transcript keeps the log
in one collapsed block, and the transcript keeps only the latest of a run of progress."""

from __future__ import annotations

import io

from jupyter_brain.agent.events import ServerLog, StepStart, ToolCallArgs, ToolCallEnd, ToolProgress, TurnEnd, TurnStart
from jupyter_brain.widgets import AgentView, TextView, events_to_markdown
from jupyter_brain.widgets._fold import fold


def _turn(n: int = 8) -> list:
    return [
        TurnStart(user_message="index it"),
        StepStart(step=1),
        ToolCallArgs(step=1, call_id="c1", name="docs__index", arguments={}, wave=1),
        *[ToolProgress(step=1, call_id="c1", progress=i, total=n, message="indexing" if i < n else "done")
          for i in range(1, n + 1)],
        ServerLog(step=1, call_id="c1", server="docs", level="info", message="opened 3 files"),
        ServerLog(step=1, server="docs", level="warning", logger="db", message="slow disk"),
        ToolCallEnd(step=1, call_id="c1", name="docs__index", status="ok", duration_ms=900, wave=1),
        TurnEnd(status="completed", text="Indexed."),
    ]


def test_text_view_prints_a_quarter_of_progress_at_a_time_and_loud_log_lines() -> None:
    out = io.StringIO()
    view = TextView(out)
    for event in _turn():
        view.handle(event)
    lines = out.getvalue().splitlines()
    assert [line for line in lines if "⋯" in line] == [
        "    ⋯ 1/8 · indexing", "    ⋯ 2/8 · indexing", "    ⋯ 4/8 · indexing", "    ⋯ 6/8 · indexing",
        "    ⋯ 8/8 · done"]
    assert "  ⚑ docs (db) warning: slow disk" in lines
    assert not any("opened 3 files" in line for line in lines)  # info: the transcript's log only


def test_markdown_keeps_the_server_log_in_one_collapsed_block() -> None:
    md = events_to_markdown(_turn())
    assert md.count("<details><summary>MCP server log (2 lines)</summary>") == 1
    assert "docs info: opened 3 files\ndocs (db) warning: slow disk" in md
    assert "indexing" not in md  # progress is live-only: the result says how the call ended


def test_a_run_of_progress_folds_to_its_latest_in_the_transcript() -> None:
    events = _turn(50)
    entries = fold(events)
    progress = [e for e in entries if e["type"] == "tool_progress"]
    assert [(e["progress"], e["message"]) for e in progress] == [(50.0, "done")]
    view = AgentView(drawn=False)
    view.replay(events)
    assert view.transcript_n == len(events)  # every raw event counted, for the live batches
    assert len(view.transcript) == len(entries)
    view.close()
