"""Secrets never reach the event log, the widget's saved state, the Markdown transcript or
the stored history: known key formats and the configured keys' values are masked."""

from __future__ import annotations

import json

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.redact import MASK, Redactor, redact_value
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers.base import StreamEvent
from jupyter_brain.providers.scripted import ScriptedProvider
from jupyter_brain.widgets import AgentView, TextView

CONFIGURED = "my-private-gateway-key-0123456789"  # no known format: only its value says it is one
ANTHROPIC = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3
GITHUB = "ghp_" + "x" * 36


@tool
def read_env() -> str:
    """Read the .env file."""
    return f"ANTHROPIC_API_KEY={ANTHROPIC}\nGATEWAY={CONFIGURED}\n"


class SplitKeyProvider(ScriptedProvider):
    """Streams the answer so the Anthropic key arrives cut in two deltas."""

    def generate_stream(self, messages, tools, **kw):
        for event in super().generate_stream(messages, tools, **kw):
            if event.type == "text" and ANTHROPIC in event.text:
                head, tail = event.text.split(ANTHROPIC)
                cut = 5  # "sk-an" + "t-api03-…": neither half looks like a key
                yield StreamEvent(type="text", text=head + ANTHROPIC[:cut])
                yield StreamEvent(type="text", text=ANTHROPIC[cut:] + tail)
            else:
                yield event


def _run(tmp_path):
    provider = SplitKeyProvider(
        [
            {"text": f"Reading it with token {GITHUB}.", "tool_calls": [{"name": "read_env", "arguments": {"key": CONFIGURED}}]},
            {"text": f"The key is {ANTHROPIC} and the gateway key {CONFIGURED}."},
        ],
        chunk_words=100,
    )
    log = EventLog(tmp_path / "events.sqlite")
    harness = AgentHarness(provider, AgentToolRegistry([read_env]), log, stream=True, redact_logs=True,
                           secrets=(CONFIGURED,), enable_tool_validation=False)
    view = AgentView()
    view.redact = harness.redactor
    lines: list[str] = []

    class Sink:
        def write(self, s):
            lines.append(s)

        def flush(self):
            pass

    text = TextView(Sink())

    def both(event):
        view.handle(event)
        text.handle(event)

    result = harness.run_turn("s", [], "what is in .env?", on_event=both)
    log.flush()
    return result, log, view, "".join(lines)


def _leaks(text: str) -> list[str]:
    return [s for s in (CONFIGURED, ANTHROPIC, GITHUB) if s in text]


def test_no_secret_in_the_event_log_history_widget_state_or_transcript(tmp_path) -> None:
    result, log, view, printed = _run(tmp_path)
    assert result.status == "completed"
    # the model's own conversation keeps the real text (it is the user's kernel) ...
    assert ANTHROPIC in result.text
    # ... but nothing saved or shown does
    raw = "\n".join(
        row[0] for row in log._db.execute("SELECT data FROM events UNION ALL SELECT data FROM messages").fetchall()
    )
    assert _leaks(raw) == [] and MASK in raw
    assert _leaks(json.dumps(log.load_history("s"))) == []
    state = json.dumps(view.get_state())
    assert _leaks(state) == [] and MASK in state
    assert _leaks(view.to_markdown()) == []
    bundle = json.dumps(view._repr_mimebundle_()[0].get("text/markdown", ""))
    assert _leaks(bundle) == []
    # each streamed delta alone cannot show the split key whole; the rest is masked
    assert CONFIGURED not in printed and GITHUB not in printed
    view.close()


def test_redact_value_keeps_untouched_objects_and_masks_nested_ones() -> None:
    r = Redactor([CONFIGURED], include_env=False)
    clean = {"a": ["x", {"b": "y"}]}
    assert redact_value(clean, r) is clean
    dirty = {"a": ["x", {"b": f"token={CONFIGURED}"}], "n": 3}
    out = redact_value(dirty, r)
    assert out["a"][1]["b"] == f"token={MASK}" and out["n"] == 3
    assert dirty["a"][1]["b"].endswith(CONFIGURED)  # the input is not mutated


def test_compare_view_masks_a_key_split_across_deltas() -> None:
    import json as _json

    from jupyter_brain.agent.events import StepStart, TextDelta, TurnEnd, TurnStart
    from jupyter_brain.widgets import CompareView

    view = CompareView(["react"])
    events = [TurnStart(user_message="q"), StepStart(step=1), TextDelta(step=1, text=f"key {ANTHROPIC[:5]}"),
              TextDelta(step=1, text=f"{ANTHROPIC[5:]} end"), TurnEnd(status="completed", text="")]
    for event in events:
        view.handle("react", 1, event)
    view.close_stream()
    state = _json.dumps(view.get_state())
    assert ANTHROPIC not in state and MASK in state
    view.close()


def test_literal_first_key_patterns_mask_exactly_what_the_look_behind_first_ones_did():
    """redact.py puts each key pattern's prefix first (fast scanning); same matches as before."""
    import re

    from jupyter_brain.foundation.redact import _PREFIXED

    start = r"(?<![A-Za-z0-9])"
    before = [re.compile(start + r"sk-ant-[A-Za-z0-9_\-]{8,}"),
              re.compile(start + r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{16,}"),
              re.compile(start + r"gh[pousr]_[A-Za-z0-9]{20,}"),
              re.compile(start + r"hf_[A-Za-z0-9]{20,}"),
              re.compile(start + r"AKIA[0-9A-Z]{16}")]
    texts = ["sk-ant-abcdefgh", "ask-ant-abcdefgh", "-sk-ant-abcdefgh", "task-force-management-plan",
             "sk-proj-abcdefghijklmnop", "xsk-abcdefghijklmnopqrst", "(sk-abcdefghijklmnopqrst)",
             "ghp_" + "a" * 20, "1ghs_" + "b" * 20, " hf_" + "c" * 20, "AKIA" + "Z" * 16, "zAKIA" + "Z" * 16,
             "key=sk-ant-abc", "sk-sk-abcdefghijklmnopqrstu", "_sk-ant-abcdefghij"]
    for text in texts:
        assert [p.findall(text) for p in _PREFIXED] == [p.findall(text) for p in before], text


def test_a_large_tool_output_is_kept_on_disk_masked(tmp_path):
    """Output too large for the context goes to the data dir's artifacts folder (issue #39):
    the key in it is masked there, and the model's page of it shows the mask."""
    from jupyter_brain.agent.artifacts import ArtifactStore

    store = ArtifactStore(tmp_path / "artifacts", redact=Redactor((CONFIGURED,)))
    text = ("row\n" * 4000) + f"ANTHROPIC_API_KEY={ANTHROPIC} GATEWAY={CONFIGURED}\n"
    preview, handle = store.offload(text, limit=1000)
    assert handle is not None
    written = b"".join(p.read_bytes() for p in (tmp_path / "artifacts").iterdir())
    assert ANTHROPIC.encode() not in written and CONFIGURED.encode() not in written
    assert store.get(handle).endswith(f"ANTHROPIC_API_KEY={MASK} GATEWAY={MASK}\n")
