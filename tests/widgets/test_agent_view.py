"""AgentView: coalescing (on a fake clock), durable transcript, repr, Markdown, bundle."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from jupyter_brain.agent.events import StepEnd, StepStart, TextDelta, TurnEnd, TurnStart
from jupyter_brain.widgets import AgentView, BundleMissingError, events_to_markdown
from jupyter_brain.widgets import _frontend_code as frontend_code_module
from jupyter_brain.widgets import agent_view as agent_view_module

from .fake_clock import FakeClock
from .scripted_events import scripted_turn

ROOT = Path(__file__).resolve().parents[2]


def fake_view(clock: FakeClock) -> AgentView:
    """A view whose batching runs on ``clock`` (time moves only by ``clock.advance``)."""
    return AgentView(clock=clock, timer_factory=clock.start_timer)


class Wire:
    """Records what the view sends to the front-end (custom batches and state updates)."""

    def __init__(self, view: AgentView, clock: Callable[[], float] = time.monotonic) -> None:
        self.batches: list[tuple[float, dict[str, Any]]] = []
        self.updates: list[dict[str, Any]] = []
        self.lock = threading.Lock()

        def _send(msg: dict[str, Any], buffers: Any = None) -> None:
            with self.lock:
                if msg["method"] == "custom":
                    self.batches.append((clock(), msg["content"]))
                elif msg["method"] == "update":
                    self.updates.append(msg["state"])

        view._send = _send  # type: ignore[method-assign]

    def events(self) -> list[dict[str, Any]]:
        return [e for _, b in self.batches for e in b["events"]]

    def text(self, step: int | None = None) -> str:
        return "".join(
            e["text"] for e in self.events() if e["type"] == "text_delta" and step in (None, e["step"])
        )


# ── coalescing ──────────────────────────────────────────────────────────────


def _assert_contiguous(batches: list[tuple[float, dict[str, Any]]], total: int) -> None:
    ends = 0
    for _, b in batches:
        assert b["kind"] == "events" and b["start"] == ends and b["end"] > b["start"]
        ends = b["end"]
    assert ends == total


@pytest.mark.parametrize("paced", [False, True], ids=["burst", "paced-2000-per-s"])
def test_coalescing_bounds_the_message_rate_and_keeps_text_exact(paced: bool, clock: FakeClock) -> None:
    view = fake_view(clock)
    wire = Wire(view, clock)
    tokens = [f"tok{i} " for i in range(2000)]
    t0 = clock()
    view.handle(TurnStart(user_message="go"))
    view.handle(StepStart(step=1))
    for tok in tokens:
        view.handle(TextDelta(step=1, text=tok))
        if paced:  # 2,000 tokens/s, the benchmark's rate
            clock.advance(1 / 2000)
    streamed = clock() - t0
    during = len(wire.batches)
    clock.advance(0.1)  # trailing data goes out from the timer, with no further event
    assert wire.text() == "".join(tokens)
    view.handle(StepEnd(step=1))
    view.handle(TurnEnd(status="completed", text="".join(tokens), steps=1))
    elapsed = clock() - t0

    # ≤ one batch per 33 ms, plus the first event's and the first text's immediate sends and
    # the forced step/turn flushes.
    assert during <= streamed / agent_view_module.FLUSH_INTERVAL_S + 3
    assert len(wire.batches) <= elapsed / agent_view_module.FLUSH_INTERVAL_S + 5
    if paced:
        assert streamed >= 0.9
        assert len(wire.batches) >= 10  # really streaming, not one lump at the end
    _assert_contiguous(wire.batches, 2004)
    # The first batch: the turn start; the second: the first words, at once; the last: the
    # turn end's forced flush. Between those, the batches keep the interval.
    gaps = [b - a for (a, _), (b, _) in pairwise(wire.batches[1:-1])]
    assert min(gaps, default=1.0) >= agent_view_module.FLUSH_INTERVAL_S * 0.9
    # consecutive deltas of a step travel as one entry per batch
    for _, b in wire.batches:
        assert sum(e["type"] == "text_delta" for e in b["events"]) <= 1
    assert wire.text() == "".join(tokens)


def test_trailing_deltas_are_flushed_by_the_timer(clock: FakeClock) -> None:
    view = fake_view(clock)
    wire = Wire(view, clock)
    view.handle(TurnStart(user_message="go"))
    for w in ["a", "b", "c"]:
        view.handle(TextDelta(step=1, text=w))
    assert len(wire.batches) == 2 and wire.text() == "a"  # the first event and the first words at once ...
    clock.advance(agent_view_module.FLUSH_INTERVAL_S)
    assert wire.text() == "abc"
    assert len(wire.batches) == 3  # ... the rest after one interval
    clock.advance(0.1)
    assert len(wire.batches) == 3  # nothing more once idle
    assert clock.armed == []


def test_events_from_several_threads_stay_ordered_and_complete() -> None:
    view = AgentView()  # real clock and timer thread: the lock is what is under test
    wire = Wire(view)

    def emit(step: int) -> None:
        for i in range(500):
            view.handle(TextDelta(step=step, text=f"{step}:{i} "))

    threads = [threading.Thread(target=emit, args=(s,)) for s in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    view.close_stream()
    _assert_contiguous(wire.batches, 2000)
    for step in range(1, 5):
        assert wire.text(step) == "".join(f"{step}:{i} " for i in range(500))


# ── durable transcript ─────────────────────────────────────────────────────


def test_transcript_is_linear_in_the_text_and_committed_only_at_boundaries(clock: FakeClock) -> None:
    view = fake_view(clock)
    wire = Wire(view, clock)
    text = "".join(f"token{i} " for i in range(2000))
    view.handle(TurnStart(session_id="s", user_message="go"))
    view.handle(StepStart(step=1))
    for i in range(2000):
        view.handle(TextDelta(step=1, text=f"token{i} "))
    assert not any("transcript" in u for u in wire.updates)  # no commit per delta
    view.handle(StepEnd(step=1))
    clock.advance(agent_view_module.COMMIT_DELAY_S + 0.2)
    commits = [u for u in wire.updates if "transcript" in u]
    assert len(commits) == 1 and commits[0]["transcript_n"] == 2003  # the step-end commit
    assert commits[0]["transcript_n"] == wire.batches[-1][1]["end"]  # on a batch boundary
    view.handle(TurnEnd(status="completed", text=text, steps=1))

    assert [e["type"] for e in view.transcript] == ["turn_start", "step_start", "text_delta", "step_end", "turn_end"]
    assert view.transcript[2]["text"] == text
    assert view.transcript_n == 2004
    size = len(json.dumps(view.transcript))
    assert size < len(text) + 1000  # the text once (TurnEnd.text repeats it: emptied) + fixed fields
    assert view.transcript[-1]["text"] == ""
    commits = [u for u in wire.updates if "transcript" in u]
    assert len(commits) == 2  # step end, turn end
    assert commits[-1]["transcript_n"] == 2004 and commits[-1]["status"] == "completed"


def test_a_turn_that_streamed_nothing_keeps_its_final_text() -> None:
    view = AgentView()
    Wire(view)
    for e in [TurnStart(user_message="q"), StepStart(step=1), StepEnd(step=1), TurnEnd(status="completed", text="42")]:
        view.handle(e)
    assert view.transcript[-1]["text"] == "42"


def test_step_end_commits_are_deferred_and_rate_limited_but_never_lost(clock: FakeClock) -> None:
    view = fake_view(clock)
    wire = Wire(view, clock)
    view.handle(TurnStart(user_message="go"))
    for step in range(1, 41):  # a fast scripted turn: 40 steps at once
        view.handle(StepStart(step=step))
        view.handle(TextDelta(step=step, text="x"))
        view.handle(StepEnd(step=step))
    assert not [u for u in wire.updates if "transcript" in u]
    clock.advance(agent_view_module.COMMIT_DELAY_S - 0.01)
    assert not [u for u in wire.updates if "transcript" in u]  # deferred
    clock.advance(0.02)
    assert view.transcript_n == 121  # the deferred commit came from the timer
    clock.advance(0.2)
    assert len([u for u in wire.updates if "transcript" in u]) == 1
    view.handle(TurnEnd(status="max_steps", text=""))
    assert len([u for u in wire.updates if "transcript" in u]) == 2


def test_a_step_end_right_before_the_turn_end_costs_one_commit(clock: FakeClock) -> None:
    view = fake_view(clock)
    wire = Wire(view, clock)
    for e in scripted_turn():
        view.handle(e)
    clock.advance(agent_view_module.COMMIT_DELAY_S + 0.1)
    assert len([u for u in wire.updates if "transcript" in u]) == 1  # step 1 deferred, then superseded
    assert view.status == "completed"


def test_replay_equals_the_live_transcript() -> None:
    events = scripted_turn()
    live = AgentView()
    Wire(live)
    for e in events:
        live.handle(e)
    replayed = AgentView()
    wire = Wire(replayed)
    replayed.replay(events)
    assert replayed.transcript == live.transcript
    assert replayed.transcript_n == live.transcript_n == len(events)
    for name in ("session_id", "turn", "status", "step", "steps", "model_label", "think_level", "strategy", "usage"):
        assert getattr(replayed, name) == getattr(live, name), name
    assert replayed.epoch == live.epoch + 1
    assert wire.batches == []  # a replay is one commit, no live messages
    assert len(wire.updates) == 1
    # From dicts (as EventLog or JSON gives them) too.
    from_dicts = AgentView(events=[e.model_dump(mode="json") for e in events])
    assert from_dicts.transcript == live.transcript


def test_live_batches_fold_to_the_durable_transcript(clock: FakeClock) -> None:
    """What the browser merges from batches equals the committed transcript."""
    events = scripted_turn(tokens=300)
    view = fake_view(clock)
    wire = Wire(view, clock)
    for e in events:
        view.handle(e)
        clock.advance(0.0005)
    merged: list[dict[str, Any]] = []
    keys = {"text_delta": "text", "thinking_delta": "text", "tool_call_args_delta": "delta"}
    for e in wire.events():
        last = merged[-1] if merged else None
        same = last is not None and last["type"] == e["type"] in keys and last.get("step") == e.get("step") \
            and last.get("call_id") == e.get("call_id")
        if same:
            merged[-1] = {**last, keys[e["type"]]: last[keys[e["type"]]] + e[keys[e["type"]]]}
        else:
            merged.append(e)
    strip = lambda entries: [{k: v for k, v in e.items() if k != "ts"} for e in entries]  # noqa: E731
    assert strip(merged) == strip(view.transcript)


def test_header_traits_come_from_events_only() -> None:
    view = AgentView()
    Wire(view)
    for e in scripted_turn():
        view.handle(e)
    assert view.session_id == "default"
    assert view.model_label == "scripted/demo"
    assert (view.think_level, view.strategy, view.status, view.steps, view.turn) == ("medium", "react", "completed", 2, 1)
    assert view.usage["input_tokens"] == 2200 and view.usage["cost_usd"] == pytest.approx(0.022)


def test_handle_validates_events() -> None:
    view = AgentView()
    Wire(view)
    with pytest.raises(ValueError):
        view.handle({"type": "text_delta", "text": "no step"})
    with pytest.raises(ValueError):
        view.handle({"type": "nonsense"})


# ── repr, Markdown ────────────────────────────────────────────────────


def test_repr_is_stable_and_readable() -> None:
    view = AgentView()
    assert repr(view) == "AgentView(session='-', turn=0, status='idle', steps=0)"
    Wire(view)
    for e in scripted_turn():
        view.handle(e)
    text = "AgentView(session='default', turn=1, status='completed', steps=2)"
    assert repr(view) == text
    bundle = view._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert data["text/plain"] == text
    assert "0x" not in text


def test_to_markdown_reads_as_a_transcript() -> None:
    view = AgentView()
    Wire(view)
    for e in scripted_turn(tokens=3):
        view.handle(e)
    md = view.to_markdown()
    assert md.startswith("### Agent — Turn 1 · scripted/demo · think medium · strategy react · session default\n")
    assert "> **You:** Plot df" in md
    assert "<details><summary>Thinking</summary>\n\n> t0 t1 t2 t3 t4\n\n</details>" in md
    assert "Let me **look**:\n\n```python\ndf.head()\n```" in md
    assert "**Tool** `python` · wave 1\n\n```python\ndf.head()\n```" in md  # code as code (issue #13)
    assert "✓ `python` ok · 1.2 s" in md
    assert "<details><summary>Result</summary>\n\n```\n   a  b\n0  1  2\n```\n\n</details>" in md
    assert "✗ `read_file` error · 3 ms\n\n```\nFileNotFoundError: a.csv\n```" in md
    assert "> **Reflection** (after a tool error, confidence 80%): The file is missing; use df." in md
    assert "> *Reflection skipped: [budget exhausted]*" in md
    assert "- **Thought:** inspect df" in md
    assert "> **⚠ Error** `rate_limit` (the agent continues): 429, retrying" in md
    assert "*History compacted (summarize): 12,000 → 3,000 tokens*" in md
    assert "w0 w1 w2" in md
    # Answer first, then the summary line, then the steps (issue #13).
    assert "> **You:** Plot df\n\nplotted\n\n**✓ completed · 2 steps · 2 tools · 2 reflections · 4.3 s · $0.0220**" \
        " · tokens in 2,200 / out 80 / cache read 0 / cache write 0\n\n*History compacted" in md
    assert events_to_markdown(scripted_turn(tokens=3)) == md


# ── packaging ───────────────────────────────────────────────────────────────


def test_missing_bundle_fails_clearly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(frontend_code_module, "STATIC", tmp_path)
    with pytest.raises(BundleMissingError, match="npm run build"):
        AgentView()


def test_bundle_is_an_es_module_with_a_default_export() -> None:
    js = (ROOT / "jupyter_brain" / "static" / "agent_view.js").read_text()
    css = (ROOT / "jupyter_brain" / "static" / "agent_view.css").read_text()
    assert "export" in js and "default" in js
    assert ".jb-agent-view" in css
    frontend_code_module.forget_sent()
    view = AgentView()  # the kernel's first view carries the code, beside the small loader
    assert view._code_js == js and view._code_css == css
    assert "export default" in view._esm and len(view._esm) < 4000 and view._css == ""
    view.close()


# ── a real kernel: background-thread sends reach the client ─────────────────


@pytest.mark.kernel
def test_timer_thread_sends_reach_iopub_in_a_real_kernel() -> None:
    import jupyter_client  # ipykernel's dependency: a test requirement, never skipped
    km = jupyter_client.KernelManager(kernel_name="python3")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        # The view's clock stands still while the cell sends its events, so the first goes
        # at once and the rest wait for the timer; then time moves on, and with no further
        # event only the (real) timer thread can send them.
        code = (
            "import threading\n"
            "from jupyter_brain.widgets import AgentView\n"
            "from jupyter_brain.widgets._timer import start_timer\n"
            "from jupyter_brain.agent.events import TurnStart, TextDelta\n"
            "now = [0.0]\n"
            "sent_by_timer = threading.Event()\n"
            "def timers(delay, callback):\n"
            "    def fire(timer):\n"
            "        advanced = now[0] > 0.0\n"
            "        callback(timer)\n"
            "        if advanced:\n"
            "            sent_by_timer.set()\n"
            "    return start_timer(delay, fire)\n"
            "v = AgentView(clock=lambda: now[0], timer_factory=timers)\n"
            "v.handle(TurnStart(user_message='go'))\n"
            "for w in ['a', 'b', 'c']:\n"
            "    v.handle(TextDelta(step=1, text=w))\n"
            "now[0] = 1.0\n"
            "assert sent_by_timer.wait(30), 'the timer thread never sent the pending deltas'\n"
        )
        msg_id = kc.execute(code)
        batches: list[tuple[dict[str, Any], dict[str, Any]]] = []
        idle_seen = False
        deadline = time.monotonic() + 60
        while not idle_seen and time.monotonic() < deadline:
            msg = kc.get_iopub_msg(timeout=30)
            content = msg["content"]
            if msg["msg_type"] == "comm_msg" and content["data"].get("method") == "custom":
                batches.append((msg["parent_header"], content["data"]["content"]))
            elif msg["msg_type"] == "status" and content["execution_state"] == "idle" \
                    and msg["parent_header"].get("msg_id") == msg_id:
                idle_seen = True
            elif msg["msg_type"] == "error":
                pytest.fail("\n".join(content["traceback"]))
        assert idle_seen
        sent = [[(e["type"], e.get("text")) for e in b["events"]] for _, b in batches]
        # the first event and the first words at once (the cell's thread); the later deltas,
        # coalesced, from the timer thread
        assert sent == [[("turn_start", None)], [("text_delta", "a")], [("text_delta", "bc")]], sent
        assert all(parent.get("msg_id") == msg_id for parent, _ in batches)  # attributed to the cell
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_mimebundle_adds_markdown_transcript_once_the_turn_ended():
    from jupyter_brain.agent.events import TurnEnd, TurnStart
    from jupyter_brain.widgets import AgentView

    view = AgentView()
    data, _ = view._repr_mimebundle_()
    assert "text/markdown" not in data and "application/vnd.jupyter.widget-view+json" in data
    view.handle(TurnStart(session_id="s", user_message="q"))
    view.handle(TurnEnd(status="completed", text="the answer"))
    data, _ = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "the answer" in data["text/markdown"]
    view.close()


def test_the_first_text_delta_of_a_turn_goes_out_at_once_later_ones_are_batched(clock: FakeClock) -> None:
    """The batch timer never holds back a turn's first words (issue #26): the turn start went
    out just now, so the interval has not passed, yet the first delta is sent without any
    timer firing; the next ones wait for the timer as before."""
    view = fake_view(clock)
    wire = Wire(view, clock)
    for turn in (1, 2):
        view.handle(TurnStart(user_message=f"go {turn}"))
        view.handle(StepStart(step=1))
        clock.advance(0.001)  # well inside the interval: a timer is armed for the step start
        assert clock.armed
        sent = len(wire.batches)
        view.handle(TextDelta(step=1, text="March"))
        assert len(wire.batches) == sent + 1  # no clock.advance: sent by handle() itself
        last = wire.batches[-1][1]["events"][-1]
        assert (last["type"], last["text"]) == ("text_delta", "March")
        view.handle(TextDelta(step=1, text=" had"))
        view.handle(TextDelta(step=1, text=" the"))
        assert len(wire.batches) == sent + 1  # later deltas wait for the batch
        clock.advance(agent_view_module.FLUSH_INTERVAL_S)
        assert len(wire.batches) == sent + 2
        assert wire.text(1).endswith("March had the")
        view.handle(StepEnd(step=1))
        view.handle(TurnEnd(status="completed", text="March had the", steps=1))
