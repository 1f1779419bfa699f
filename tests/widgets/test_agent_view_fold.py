"""What the AgentView syncs for #13: the fold mode, and tool outputs kept on the entries."""

from __future__ import annotations

import pytest
import traitlets

from jupyter_brain.agent.events import ToolCallEnd, TurnStart
from jupyter_brain.widgets import AgentView


def test_fold_is_a_synced_trait_with_two_values() -> None:
    view = AgentView(fold="never")
    assert view.fold == "never" and AgentView().fold == "auto"
    assert view.trait_metadata("fold", "sync") is True
    with pytest.raises(traitlets.TraitError):
        AgentView(fold="sometimes")


def test_tool_outputs_travel_in_the_transcript() -> None:
    view = AgentView()
    table = {"mime_type": "text/html", "data": "<table><tr><td>1</td></tr></table>", "role": "value"}
    view.handle(TurnStart(user_message="go"))
    view.handle(ToolCallEnd(step=1, call_id="c", name="run_python", status="ok", outputs=[table]))
    view.close_stream()
    [end] = [e for e in view.transcript if e["type"] == "tool_call_end"]
    assert end["outputs"] == [table]


def test_step_end_commits_space_out_as_the_transcript_grows(clock) -> None:
    from jupyter_brain.agent.events import StepEnd, StepStart, TextDelta
    from jupyter_brain.widgets import agent_view as module

    assert module.commit_interval(10) == module.COMMIT_INTERVAL_S
    assert module.commit_interval(4 * module.COMMIT_GROWTH_ENTRIES) == 4 * module.COMMIT_INTERVAL_S
    view = AgentView(clock=clock, timer_factory=clock.start_timer)
    view.handle(TurnStart(user_message="go"))
    commits = []
    view.observe(lambda change: commits.append(clock()), names="transcript_n")
    for step in range(1, 400):  # ~3 entries a step: the transcript outgrows the base interval
        view.handle(StepStart(step=step))
        view.handle(TextDelta(step=step, text="x"))
        view.handle(StepEnd(step=step))
        clock.advance(0.05)
    gaps = [b - a for a, b in zip(commits, commits[1:], strict=False)]
    assert commits and gaps[-1] > 2 * module.COMMIT_INTERVAL_S, gaps
    view.close()
