"""``%agent cost`` marks turns whose usage was estimated locally (#12 item 6)."""

from __future__ import annotations

from types import SimpleNamespace

from jupyter_brain.agent.cost import SessionCostTracker
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.events.schema import TurnEnd, TurnStart
from jupyter_brain.cell_turns import CellHistory
from jupyter_brain.notebook.subcommands.past_turns import cmd_cost
from jupyter_brain.providers.base import Usage
from jupyter_brain.turn_costs import record_turn_cost


def test_estimated_turns_are_marked(capsys) -> None:
    log = EventLog(":memory:")
    tracker = SessionCostTracker()
    tracker.record("t1", Usage(input_tokens=100, output_tokens=10), "claude-sonnet-4-5", "anthropic")
    tracker.record("t2", Usage(input_tokens=50, output_tokens=5, estimated=True), "llama3.1", "ollama")
    for turn_id in ("t1", "t2"):  # the turns as the log has them, their costs as the session records them
        log.append(TurnStart(session_id="s", turn_id=turn_id, user_message="q"))
        log.append(TurnEnd(session_id="s", turn_id=turn_id, status="completed", text="a", steps=1))
        record_turn_cost(log, "s", tracker.turn(turn_id))
    session = SimpleNamespace(name="s", cells=CellHistory(log, "s", []))
    magics = SimpleNamespace(manager=SimpleNamespace(current=session, event_log=log))
    cmd_cost(magics, [])
    lines = capsys.readouterr().out.splitlines()
    assert "estimated" not in lines[0]
    assert lines[1].endswith("≈ estimated (the server reported no usage)")
    assert lines[2].startswith("total:") and lines[2].endswith("≈ estimated in part")
    assert tracker.turn("t2").estimated and not tracker.turn("t1").estimated
    assert tracker.summary()["usage_estimated"] is True
    log.close()
