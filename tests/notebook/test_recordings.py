"""Where a kernel finds a cell's recordings: its notebook, the folder's notebooks, the log."""

from __future__ import annotations

import json

import nbformat

from jupyter_brain.agent.events import EventLog
from jupyter_brain.notebook.recordings import candidates_for, notebook_files, notebook_path
from jupyter_brain.notebook.replay import cell_source
from jupyter_brain.providers.replay import RecordedCall, TurnRecording, cell_key


def recording(source: str, first_fp: str) -> TurnRecording:
    return TurnRecording(cell=cell_key(source), provider="scripted", model="m",
                         calls=[RecordedCall(fp=first_fp, response={"text": "hi"})])


def save(path, cells) -> None:
    nb = nbformat.v4.new_notebook()
    for cell_id, source, rec in cells:
        cell = nbformat.v4.new_code_cell(source)
        cell.id = cell_id
        if rec is not None:
            cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": "view"},
                                                   metadata={"jupyter_brain": {"recording": rec.dump()}})]
        nb.cells.append(cell)
    nbformat.write(nb, path)


def test_the_notebook_is_found_from_the_setting_vs_code_or_jupyter_server(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    for name in ("a.ipynb", "b.ipynb", "c.ipynb"):
        save(tmp_path / name, [])
    assert notebook_path({}) is None
    monkeypatch.setenv("JPY_SESSION_NAME", "some/server/root/c.ipynb")  # relative to the server: its name here
    assert notebook_path({}) == tmp_path / "c.ipynb"
    assert notebook_path({"__vsc_ipynb_file__": str(tmp_path / "b.ipynb")}) == tmp_path / "b.ipynb"
    assert notebook_path({"__vsc_ipynb_file__": str(tmp_path / "b.ipynb")}, "a.ipynb") == tmp_path / "a.ipynb"
    assert notebook_files(tmp_path / "b.ipynb") == [tmp_path / "b.ipynb"]  # its own notebook only
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "renamed since.ipynb"))  # no such file: the folder's
    assert notebook_files(notebook_path({})) == [tmp_path / "a.ipynb", tmp_path / "b.ipynb", tmp_path / "c.ipynb"]


def test_candidates_by_cell_id_then_the_log_then_the_source(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = cell_source("--provider bot", "Which month?")
    by_id = recording("%%agent --provider bot\nAn older prompt", "fp-id")
    by_source = recording(source, "fp-saved")
    save(tmp_path / "nb.ipynb", [("cell-1", "old", by_id), ("cell-2", "x", by_source), ("cell-3", "y", None)])
    log = EventLog(":memory:")
    logged = recording(source, "fp-log")
    log.add_record("recording", {"cell": cell_key(source), "recording": logged.dump()})
    log.add_record("recording", {"cell": "another cell", "recording": recording("z", "fp-other").dump()})
    found = candidates_for(source, "cell-1", notebook_files(None), log)
    assert [c.calls[0].fp for c in found] == ["fp-id", "fp-log", "fp-saved"]
    assert [c.calls[0].fp for c in candidates_for(source, None, notebook_files(None), None)] == ["fp-saved"]


def test_unreadable_files_and_foreign_metadata_are_no_recordings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.ipynb").write_text("{not json", encoding="utf-8")
    save(tmp_path / "other.ipynb", [("c", "x", None)])
    nb = json.loads((tmp_path / "other.ipynb").read_text(encoding="utf-8"))
    nb["cells"][0]["outputs"] = [{"output_type": "display_data", "data": {}, "metadata": {"jupyter_brain": {"recording": {"v": 99}}}}]
    (tmp_path / "other.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    assert candidates_for("x", "c", notebook_files(None), None) == []


def test_replay_flags_are_not_part_of_the_cell():
    plain = cell_source("--provider bot  --think low", "Which month?\n")
    assert cell_source("--provider bot --replay strict --think low", "Which month?") == plain
    assert cell_source("--rerun --provider bot --think low", " Which month?") == plain
    assert cell_source("--provider bot --replay=off --think low", "Which month?") == plain
    assert cell_source("--provider bot --append --think low", "Which month?") == plain
    assert cell_source("--provider bot --think high", "Which month?") != plain


def test_a_cell_known_by_its_text_stays_the_same_cell_with_a_run_flag_added():
    """Without a cell id (VS Code, nbconvert, papermill), adding --rerun, --replay or
    --append to a cell re-runs that cell: its turn is replaced, not joined by another."""
    from jupyter_brain.notebook.cell_identity import source_key

    plain = source_key("--provider bot --think low", "Which month?")
    for line in ("--provider bot --rerun --think low", "--provider bot --think low --replay strict",
                 "--replay=off --provider bot --think low", "--append --provider bot --think low"):
        assert source_key(line, "Which month?") == plain, line
    assert source_key("--provider bot --think high", "Which month?") != plain


class _Magics:
    """What replaying_provider reads of AgentMagics."""

    def __init__(self, log):
        self.notebook, self.shell = "", None
        self.manager = type("Manager", (), {"event_log": log})()


def _options(replay: str = "auto"):
    from jupyter_brain.notebook.replay import REQUEST_FLAGS

    return type("Options", (), {"replay": replay, **dict.fromkeys(REQUEST_FLAGS, None)})()


def _args(rerun: bool = False):
    return type("Args", (), {"rerun": rerun})()


def test_a_missing_live_provider_waits_until_a_turn_needs_it(tmp_path, monkeypatch):
    import pytest
    from IPython.core.error import UsageError

    from jupyter_brain.notebook.replay import output_metadata, replaying_provider

    monkeypatch.chdir(tmp_path)
    source = cell_source("--provider anthropic", "Which month?")
    log = EventLog(":memory:")

    def no_key():
        raise UsageError("%%agent: no Anthropic API key")

    with pytest.raises(UsageError):  # nothing to replay: the error as before
        replaying_provider(_Magics(log), _options(), _args(), source, {}, no_key)
    log.add_record("recording", {"cell": cell_key(source), "recording": recording(source, "fp").dump()})
    provider = replaying_provider(_Magics(log), _options(), _args(), source, {}, no_key)
    assert provider.live is None and provider.name == "replayed" and output_metadata(provider) == {}
    with pytest.raises(UsageError):  # --rerun: no recording is used, so the key is needed now
        replaying_provider(_Magics(log), _options(), _args(rerun=True), source, {}, no_key)


def test_a_compare_cell_saves_one_recording_per_run_each_found_by_its_runs_key(tmp_path, monkeypatch):
    from jupyter_brain.notebook.compare_replay import run_source

    monkeypatch.chdir(tmp_path)
    source = cell_source("--strategies react,cot", "Which month?", "%%compare")
    runs = {(s, r): recording(run_source(source, s, r), f"fp-{s}-{r}") for s in ("react", "cot") for r in (1, 2)}
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%compare --strategies react,cot\nWhich month?")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": "view"}, metadata={
        "jupyter_brain": {"recordings": [r.dump() for r in runs.values()]}})]
    nb.cells.append(cell)
    nbformat.write(nb, tmp_path / "nb.ipynb")
    for s, r in runs:
        found = candidates_for(run_source(source, s, r), None, notebook_files(None), None)
        assert [c.calls[0].fp for c in found] == [f"fp-{s}-{r}"]  # its own run's, never another's


def test_an_unchanged_earlier_cell_rerun_after_later_ones_replays(shell):
    """It takes its earlier turn's place, so its request is the one recorded: no model call."""
    from jupyter_brain.providers.scripted import ScriptedProvider

    shell.user_ns["bot"] = bot = ScriptedProvider(["a1", "b1"])
    for n, (cell, question) in enumerate((("c1", "Q1"), ("c2", "Q2"), ("c1", "Q1"))):
        shell.parent_header = {"header": {"msg_id": f"run-{n}"}, "metadata": {"cellId": cell}}
        shell.run_cell_magic("agent", "--provider bot", question)
    assert len(bot.calls) == 2
    assert shell.user_ns["_agent"].replay == "replayed" and shell.user_ns["_agent"].text == "a1"
