"""A ``%%compare`` cell replays its runs' recordings (issue #24): Run All of a saved
comparison calls no model, each run replays its own recording, an edit goes live."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from IPython.core.error import UsageError

from jupyter_brain.agent.events import EventLog
from jupyter_brain.notebook.compare_replay import replaying_runs, run_source
from jupyter_brain.notebook.replay import cell_source
from jupyter_brain.providers.replay import RecordedCall, TurnRecording, cell_key
from jupyter_brain.providers.scripted import ScriptedProvider

ANSWERS = {"react": "Thought: multiply.\nFinal Answer: 42", "cot": "Step 1: 6*7=42\nFinal Answer: 42"}
LINE = "--strategies react,cot --runs 2 --provider bots"


class MustNotCall(ScriptedProvider):
    def generate(self, *args: Any, **kwargs: Any) -> Any:
        pytest.fail("a model was called although every run has a matching recording")

    generate_stream = generate


def bots(cls: type[ScriptedProvider] = ScriptedProvider) -> dict[str, ScriptedProvider]:
    return {s: cls([answer]) for s, answer in ANSWERS.items()}


def test_a_rerun_comparison_replays_every_run_from_its_own_recording(shell) -> None:
    shell.user_ns["bots"] = bots()
    shell.run_cell_magic("compare", LINE, "What is 6*7?")
    first = shell.user_ns["_compare"]
    log = shell.magics_manager.registry["AgentMagics"].manager.event_log
    keys = {r["cell"] for r in log.records("recording")}
    source = cell_source(LINE, "What is 6*7?", "%%compare")
    assert keys == {cell_key(run_source(source, s, r)) for s in ANSWERS for r in (1, 2)}  # one per run

    shell.user_ns["bots"] = bots(MustNotCall)  # the same cell again: nothing may be called
    shell.run_cell_magic("compare", LINE, "What is 6*7?")
    again = shell.user_ns["_compare"]
    assert [r["status"] for r in again.rows] == ["completed"] * 4
    assert {s: [t.text for t in runs] for s, runs in again.results.items()} == {
        s: [t.text for t in runs] for s, runs in first.results.items()}
    assert {t.replay for runs in again.results.values() for t in runs} == {"replayed"}
    assert all(t.cost_usd == 0 for runs in again.results.values() for t in runs)


def test_an_edited_prompt_and_rerun_go_live(shell) -> None:
    shell.user_ns["bots"] = bots()
    shell.run_cell_magic("compare", LINE, "What is 6*7?")
    shell.user_ns["bots"] = bots()
    shell.run_cell_magic("compare", LINE, "What is 7*6?")  # edited: no recording of this cell
    assert {t.replay for runs in shell.user_ns["_compare"].results.values() for t in runs} == {"live"}
    shell.run_cell_magic("compare", LINE + " --rerun", "What is 6*7?")  # recorded, yet forced live
    assert {t.replay for runs in shell.user_ns["_compare"].results.values() for t in runs} == {"live"}


def _magics(log: EventLog) -> Any:
    return SimpleNamespace(shell=None, notebook="", manager=SimpleNamespace(event_log=log))


def _recorded(log: EventLog, source: str, strategy: str, run: int) -> None:
    key = cell_key(run_source(source, strategy, run))
    recording = TurnRecording(cell=key, provider="anthropic", model="claude-sonnet-4",
                              calls=[RecordedCall(fp=f"fp-{strategy}-{run}", response={"text": "42"})])
    log.add_record("recording", {"cell": key, "recording": recording.dump()})


def _no_key() -> Any:
    raise UsageError("%%compare: ANTHROPIC_API_KEY is not set")


def test_without_a_key_a_fully_recorded_comparison_still_runs_and_says_why_it_cannot_go_live() -> None:
    log = EventLog(":memory:")
    line, cell = "--strategies react,cot --provider anthropic", "What is 6*7?"
    source = cell_source(line, cell, "%%compare")
    for strategy in ("react", "cot"):
        _recorded(log, source, strategy, 1)
    options, args = SimpleNamespace(replay="auto"), SimpleNamespace(rerun=False)
    runs = replaying_runs(_magics(log), options, args, line, cell, ["react", "cot"], 1, _no_key)
    provider = runs("react", 1)
    assert provider.live is None and provider.name == "replayed" and provider.model == "claude-sonnet-4"


def test_without_a_key_a_run_with_no_recording_keeps_the_error() -> None:
    log = EventLog(":memory:")
    line, cell = "--strategies react,cot --provider anthropic", "What is 6*7?"
    _recorded(log, cell_source(line, cell, "%%compare"), "react", 1)  # cot never ran
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY"):
        replaying_runs(_magics(log), SimpleNamespace(replay="auto"), SimpleNamespace(rerun=False), line, cell,
                       ["react", "cot"], 1, _no_key)


def test_the_output_carries_every_run_that_called_a_model() -> None:
    log = EventLog(":memory:")
    runs = replaying_runs(_magics(log), SimpleNamespace(replay="auto"), SimpleNamespace(rerun=False),
                          "--provider bot", "hi", ["cot"], 1, lambda: (lambda s, r: ScriptedProvider(["ok"])))
    assert runs.output_metadata() == {}  # nothing ran yet
    provider = runs("cot", 1)
    provider.generate([{"role": "user", "content": "hi"}], [])
    (saved,) = runs.output_metadata()["jupyter_brain"]["recordings"]
    assert TurnRecording.load(saved).cell == cell_key(run_source(cell_source("--provider bot", "hi", "%%compare"), "cot", 1))
