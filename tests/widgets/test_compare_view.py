"""CompareView (kernel side): one coalescer for every column, rows, trees, decisions, repr."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest

from jupyter_brain.agent.events import EventLog, StepStart, TextDelta, TurnStart
from jupyter_brain.agent.harness import TurnResult
from jupyter_brain.compare import comparison_history, run_comparison
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.session import AgentOptions
from jupyter_brain.widgets import CompareView
from jupyter_brain.widgets._batching import FLUSH_INTERVAL_S

from .fake_clock import FakeClock

ANSWERS = {
    "react": "Thought: multiply.\nFinal Answer: 42",
    "tot": ("Candidate 1: multiply → Score: 0.9\nCandidate 2: add repeatedly → Score: 0.5\n"
            "Candidate 3: guess → Score: 0.1\nSelected: Candidate 1\nFinal Answer: 42"),
}


def row(strategy: str, run: int, status: str = "completed", **values: Any) -> dict:
    base = {"strategy": strategy, "run": run, "status": status, "steps": 1, "tool_calls": 0, "reflections": 0,
            "input_tokens": 100, "output_tokens": 10, "cache_read_tokens": 0, "cache_creation_tokens": 0,
            "cost_usd": None, "wall_s": 1.0, "error": None}
    return {**base, **values}


@pytest.fixture()
def log():
    with EventLog(":memory:") as event_log:
        yield event_log


def fake_view(clock: FakeClock, strategies: list[str], runs: int = 1) -> tuple[CompareView, list]:
    view = CompareView(strategies, runs, clock=clock, timer_factory=clock.start_timer)
    sent: list[tuple[float, dict]] = []
    view.send = lambda msg: sent.append((clock(), msg))  # type: ignore[method-assign]
    return view, sent


# ── coalescing on a fake clock ──────────────────────────────────────────────
def test_one_message_per_interval_carries_every_column(clock: FakeClock) -> None:
    view, sent = fake_view(clock, ["react", "cot"])
    view.handle("react", 1, TurnStart(user_message="q"))
    assert len(sent) == 1 and list(sent[0][1]["batches"]) == ["react#1"]  # the first event at once
    view.handle("cot", 1, TurnStart(user_message="q"))
    view.handle("cot", 1, StepStart(step=1))
    view.handle("react", 1, TextDelta(step=1, text="a"))
    view.handle("react", 1, TextDelta(step=1, text="b"))
    view.handle("cot", 1, TextDelta(step=1, text="c"))
    assert len(sent) == 1  # the rest waits for the interval
    clock.advance(FLUSH_INTERVAL_S)
    assert len(sent) == 2
    at, msg = sent[1]
    assert at == sent[0][0] + FLUSH_INTERVAL_S and msg["kind"] == "compare"
    assert {k: (b["start"], b["end"]) for k, b in msg["batches"].items()} == {"react#1": (1, 3), "cot#1": (0, 3)}
    clock.advance(1.0)
    assert len(sent) == 2 and clock.armed == []  # nothing more once idle
    view.close()


def test_a_steady_stream_stays_under_the_message_rate(clock: FakeClock) -> None:
    view, sent = fake_view(clock, ["react", "cot", "tot", "reflexion"])
    for strategy in ("react", "cot", "tot", "reflexion"):
        view.handle(strategy, 1, TurnStart(user_message="q"))
    for i in range(500):  # four columns at 500 events/s each for one second
        for strategy in ("react", "cot", "tot", "reflexion"):
            view.handle(strategy, 1, TextDelta(step=1, text=f"{i} "))
        clock.advance(0.002)
    clock.advance(FLUSH_INTERVAL_S)
    times = [t for t, _ in sent]
    assert len(sent) <= 1.0 / FLUSH_INTERVAL_S + 3
    assert all(b - a >= FLUSH_INTERVAL_S * 0.999 for a, b in pairwise(times))
    for key in ("react#1", "cot#1", "tot#1", "reflexion#1"):
        batches = [m["batches"][key] for _, m in sent if key in m["batches"]]
        assert [b["start"] for b in batches[1:]] == [b["end"] for b in batches[:-1]]  # contiguous
        text = "".join(e["text"] for b in batches for e in b["events"] if e["type"] == "text_delta")
        assert text == "".join(f"{i} " for i in range(500))
    view.close()


def test_a_finished_run_is_sent_at_once(clock: FakeClock) -> None:
    view, sent = fake_view(clock, ["react"])
    view.handle("react", 1, TurnStart(user_message="q"))
    view.handle("react", 1, TextDelta(step=1, text="42"))
    assert len(sent) == 1 and clock.armed
    view.run_finished(row("react", 1), TurnResult(session_id="s", turn_id="t", status="completed", text="42"))
    assert len(sent) == 2 and sent[1][0] == sent[0][0]  # no waiting for the timer
    assert clock.armed == []
    assert view.columns[0]["n"] == 2
    view.close()


# ── with the comparison runner ─────────────────────────────────────────────
def test_compare_view_coalesces_records_decisions_and_reprs(log, clock: FakeClock):
    # Time stands still while the runs stream (their threads call handle): only the first
    # event and the forced flushes (each run's end, the stream's close) can send.
    view = CompareView(["react", "tot"], 1, "What is 6*7?", clock=clock, timer_factory=clock.start_timer)
    sent: list[dict] = []
    view.send = sent.append  # type: ignore[method-assign]
    bots = {s: ScriptedProvider([ANSWERS[s]], chunk_words=1) for s in ("react", "tot")}
    result = run_comparison("What is 6*7?", ["react", "tot"], lambda s, r: bots[s], list, AgentOptions(),
                            event_log=log, on_event=view.handle, on_run_end=view.run_finished)
    view.bind(result.comparison_id, log)
    view.close_stream()
    assert sent and all(m["kind"] == "compare" for m in sent)
    events = sum(len(b["events"]) for m in sent for b in m["batches"].values())
    assert len(sent) < events  # many events, fewer messages: coalesced
    assert len(sent) <= 1 + 2 + 1
    for key in ("react#1", "tot#1"):
        batches = [m["batches"][key] for m in sent if key in m["batches"]]
        assert [b["start"] for b in batches[1:]] == [b["end"] for b in batches[:-1]]  # contiguous
    assert {c["key"]: c["n"] > 0 for c in view.columns} == {"react#1": True, "tot#1": True}
    assert [r["strategy"] for r in view.rows] == ["react", "tot"]  # listed order, whatever finished first
    tree = view.trees["tot#1"]
    assert tree["threshold"] == 0.4
    assert [(b["branch_id"], b["score"], b["selected"]) for b in tree["branches"]] == [
        (1, 0.9, False), (2, 0.5, False), (3, 0.1, False), (1, 0.9, True)]
    assert repr(view) == "CompareView(strategies=['react', 'tot'], runs=1, finished=2/2, winner=None)"
    view._on_front_end_msg(view, {"kind": "mark_best", "strategy": "tot", "run": 1}, [])
    assert view.winner == "tot"
    assert comparison_history(log)[0]["winner"] == "tot"
    assert "winner='tot'" in repr(view)
    markdown = view.to_markdown()
    assert "| tot | 1 | completed |" in markdown and "Winner: **tot**" in markdown
    with pytest.raises(ValueError, match="not in this comparison"):
        view.mark_best("cot")
    view.close()


def test_compare_view_keeps_rows_in_listed_order():
    view = CompareView(["react", "cot"], 2)
    view.send = lambda msg: None  # type: ignore[method-assign]
    done = TurnResult(session_id="s", turn_id="t", status="completed", text="")
    for strategy, run in (("cot", 2), ("react", 2), ("cot", 1), ("react", 1)):
        view.run_finished(row(strategy, run), done)
    assert [(r["strategy"], r["run"]) for r in view.rows] == [("react", 1), ("react", 2), ("cot", 1), ("cot", 2)]
    assert [s["runs"] for s in view.summary] == [2, 2] and view.summary[0]["steps_sd"] == 0.0
    assert view.trees == {}
    view.close()


def test_markdown_fallback_shows_success_first_failures_and_notes():
    """nbconvert and VS Code read the Markdown: pass/fail, each failure's reason, the rate."""
    from types import SimpleNamespace

    view = CompareView(["react", "cot"], 2, "What is 6*7?")
    view.send = lambda msg: None  # type: ignore[method-assign]
    done = TurnResult(session_id="s", turn_id="t", status="completed", text="")
    judged = {"kind": "judge", "label": "judge", "passed": True, "reason": "", "opinion": True,
              "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    for strategy, run, passed in (("react", 1, True), ("react", 2, True), ("cot", 1, True), ("cot", 2, False)):
        view.run_finished(row(strategy, run, passed=passed, reason="" if passed else "expect: expected '42'",
                              verdicts=[judged], wall_s=2.0), done)
    view.finish(SimpleNamespace(rows=view.rows, stopped_by_budget=False, namespace_changes=["df (changed)"]))
    markdown = view.to_markdown()
    assert "> **Note:** your variables changed during the comparison (namespace not intact): df (changed)" in markdown
    assert "| strategy | success (95 % CI) | tokens | cost $ | time s |" in markdown
    assert "| react | 2/2 · 100 % (34–100 %) | 110 | – | 2.00 |" in markdown  # no "± 0.0" where runs agree
    assert "| cot | 1/2 · 50 % (9–91 %) |" in markdown
    assert "| cot | 2 | completed | **FAIL** |" in markdown
    assert "**cot #2** FAIL: expect: expected '42'" in markdown
    assert "*judge: a model's opinion, not a rule*" in markdown
    view.close()


def test_a_finished_comparison_becomes_data_and_the_widget_retires(log, clock: FakeClock):
    """#40: what a saved notebook keeps of a finished %%compare is its bundle (the view's state
    as application/vnd.jupyter-brain.compare+json, the answers in the Markdown), not a widget."""
    from jupyter_brain.widgets.agent_view import NO_CODE_ESM
    from jupyter_brain.widgets.compare_bundle import COMPARE_MIME

    view = CompareView(["react", "tot"], 1, "What is `6*7`?", clock=clock, timer_factory=clock.start_timer)
    view.send = lambda msg: None  # type: ignore[method-assign]
    bots = {s: ScriptedProvider([ANSWERS[s]]) for s in ("react", "tot")}
    result = run_comparison("What is 6*7?", ["react", "tot"], lambda s, r: bots[s], list, AgentOptions(),
                            event_log=log, on_event=view.handle, on_run_end=view.run_finished)
    view.bind(result.comparison_id, log)
    data = view.finished_bundle()
    assert set(data) == {COMPARE_MIME, "text/markdown", "text/plain"}
    state = data[COMPARE_MIME]
    assert state["version"] == 1 and state["comparison_id"] == result.comparison_id
    assert state["prompt"] == "What is `6*7`?"
    assert [c["key"] for c in state["columns"]] == ["react#1", "tot#1"]
    assert all(c["transcript"] and c["n"] for c in state["columns"])
    assert [r["strategy"] for r in state["rows"]] == ["react", "tot"] and "tot#1" in state["trees"]
    markdown = data["text/markdown"]
    assert "**react#1 answered:**\n\n> 42" in markdown and "Final Answer" not in markdown
    assert data["text/plain"].startswith("CompareView(")
    view.retire()
    assert view._esm == NO_CODE_ESM and view._css == "" and view.columns == [] and view.trees == {}
    assert view.comm is None  # closed
