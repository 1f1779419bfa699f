"""A turn as a regression test: ``%agent export-test N`` and ``TurnResult.to_test()`` (#27).

The test is a pytest file that a reader can follow: the turn's ``%%agent`` flags and prompt,
the setup cells that ran before it, the checks, written as Python literals in the file; the
turn's recording (each model call's response, with the fingerprint of its request) and the
session's history before the turn in a JSON file beside it (``test_turn_3.py`` →
``test_turn_3.json``). Running it is the notebook layer's job
(``jupyter_brain.notebook.exported_turn``): a fresh in-process IPython runs the cell again,
replaying the recording strictly (no key, no network) or, live, asking the model.

Nothing here imports IPython: this module writes text. What a turn needs to be written
(``TurnSource``) is gathered by the cell that ran it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..foundation.redact import Redactor, redact_value

LIVE_ENV = "JUPYTER_BRAIN_LIVE"  # set to 1: the exported tests ask the model instead of replaying
CASE_FORMAT = 1


class ExportError(ValueError):
    """Why a turn cannot be written as a test (one line, for the user)."""


class TurnSource(BaseModel):
    """What a turn's test replays: its cell, the kernel's state before it, its recording."""

    session: str = ""
    turn_id: str = ""
    turn_number: int = 0
    flags: str = ""  # the %%agent line, without --replay/--rerun/--append/--session/--new/--out
    prompt: str = ""  # the cell's body as written (before {name} interpolation)
    setup: list[str] = Field(default_factory=list)  # the code cells the kernel ran before the turn
    config: dict[str, Any] = Field(default_factory=dict)  # AgentMagics settings not at their defaults
    history: list[dict[str, Any]] = Field(default_factory=list)  # the session's history the turn was sent
    recording: dict[str, Any] | None = None  # TurnRecording.dump(): the model calls
    answer: str = ""  # the recorded final text
    status: str = ""


@dataclass(frozen=True)
class ExportChecks:
    """The checks an exported test asserts: ``--expect`` texts and ``--check`` expressions.
    With neither, the test asserts the recorded answer's text."""

    expect: Sequence[str] = field(default_factory=tuple)
    check: Sequence[str] = field(default_factory=tuple)

    def __bool__(self) -> bool:
        return bool(self.expect or self.check)


def masked_source(source: TurnSource, secrets: Sequence[str] = ()) -> TurnSource:
    """``source`` with every secret masked: the setup cells, the history, the recording and
    the answer go into files people commit (a key the model echoed, one a setup cell set).
    The recording's fingerprints were taken over masked text, so the test still replays."""
    data = source.model_dump(mode="json")
    masked = redact_value(data, Redactor(secrets))
    return source if masked is data else TurnSource.model_validate(masked)


def exported_test_path(path: str | os.PathLike[str] | None, turn_number: int) -> Path:
    """Where the test goes: ``PATH`` as given (a ``.py`` file), inside ``PATH`` when it is a
    folder, else ``test_turn_N.py`` in the working directory."""
    name = f"test_turn_{turn_number or 'last'}.py"
    if path is None or str(path) == "":
        return Path.cwd() / name
    target = Path(path).expanduser()
    if target.is_dir() or str(path).endswith(("/", os.sep)):
        return target / name
    if target.suffix != ".py":
        raise ExportError(f"the test file must end in .py (pytest collects test_*.py), got {str(path)!r}")
    return target


def write_test(source: TurnSource, path: str | os.PathLike[str] | None = None, *, live: bool = False,
               checks: ExportChecks | None = None) -> Path:
    """Write the test (and its JSON beside it); the test's path. ``ExportError`` says why not."""
    if not source.recording or not source.recording.get("calls"):
        which = f"turn {source.turn_number}" if source.turn_number else "the turn"
        raise ExportError(f"{which} has no recording (it made no model call), so there is nothing to replay")
    checks = checks or ExportChecks()
    source = masked_source(source)
    for expression in checks.check:
        try:
            compile(expression, "<check>", "eval")
        except SyntaxError as exc:
            raise ExportError(f"--check {expression!r} is not a Python expression ({exc.msg})") from None
    target = exported_test_path(path, source.turn_number)
    case = target.with_suffix(".json")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        case.write_text(json.dumps({"format": CASE_FORMAT, **source.model_dump(mode="json",
                                                                                 exclude={"setup", "flags", "prompt"})},
                                   indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
        target.write_text(render_test(source, case.name, live=live, checks=checks), encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target


def _function_name(stem: str) -> str:
    name = "".join(c if c.isalnum() else "_" for c in stem)
    return name if name.startswith("test") else f"test_{name}"


def render_test(source: TurnSource, case_name: str, *, live: bool, checks: ExportChecks) -> str:
    """The test file's text (see the module's docstring)."""
    number = f"Turn {source.turn_number}" if source.turn_number else "A turn"
    stem = Path(case_name).stem
    lines = [
        f'"""{number} of session {source.session!r}, exported by ``%agent export-test`` as a regression test.',
        "",
        "It runs the turn's cell again in a fresh in-process IPython with jupyter_brain loaded: first the",
        "SETUP cells (the code cells the kernel ran before the turn, magics of jupyter_brain left out: they",
        "recreate the variables the turn's tools and the checks read; edit them if a cell is slow or reads",
        "files that are not there), with the session's history before the turn and the kernel's CONFIG,",
        f"then ``%%agent {source.flags}`` with PROMPT, and asserts the checks on the answer and on the",
        "namespace the turn left behind.",
        "",
        f"Replay (the default): the model's answers come from the recording in {case_name}",
        "(``--replay strict``: no key, no network, no model call; the tools run for real). When a prompt,",
        "a tool, a flag or the history no longer gives the requests the turn recorded, the test fails and",
        "says what changed.",
        f"Live: set {LIVE_ENV}=1 (or export with ``--live``) to ask the model the flags name instead (a",
        "provider variable must be defined by SETUP; a named provider needs its key).",
        '"""',
        "",
        "import os",
        "from pathlib import Path",
        "",
        "from jupyter_brain.notebook.exported_turn import run_exported_turn",
        "",
        f"LIVE = {live!r} or os.environ.get({LIVE_ENV!r}, '') not in ('', '0')",
        f"FLAGS = {source.flags!r}",
        f"PROMPT = {_literal(source.prompt)}",
        f"CONFIG = {source.config!r}",
        "SETUP = [",
        *[f"    {_literal(cell)}," for cell in source.setup],
        "]",
        f"RECORDED_ANSWER = {_literal(source.answer)}",
        "",
        "",
        f"def {_function_name(stem)}(tmp_path):",
        f"    turn = run_exported_turn(Path(__file__).with_name({case_name!r}), FLAGS, PROMPT, SETUP, CONFIG,",
        "                             workdir=tmp_path, live=LIVE)",
        "    turn.assert_ran()  # replayed to the end (or, live, answered)",
    ]
    for text in checks.expect:
        lines.append(f"    turn.assert_expect({text!r})")
    for expression in checks.check:
        lines.append(f"    turn.assert_check({expression!r})")
    if not checks:
        lines.append("    turn.assert_answer(RECORDED_ANSWER)")
    return "\n".join(lines) + "\n"


def _literal(text: str) -> str:
    """A string literal a reader can read: triple-quoted for several lines, else ``repr``."""
    if "\n" in text and '"""' not in text and "\\" not in text and not text.endswith('"'):
        return '"""' + text + '"""'
    return repr(text)


@dataclass(frozen=True)
class TurnExporter:
    """Kept on a notebook turn's ``TurnResult`` so that ``to_test()`` can write it."""

    source: TurnSource

    def write(self, path: str | os.PathLike[str] | None = None, *, live: bool = False, checks: Any = None) -> Path:
        return write_test(self.source, path, live=live, checks=as_checks(checks))


def as_checks(checks: Any) -> ExportChecks:
    """``to_test(checks=...)``: a ``ExportChecks``, a mapping ``{"expect": [...], "check": [...]}``,
    or a list of ``--check`` expressions."""
    if checks is None:
        return ExportChecks()
    if isinstance(checks, ExportChecks):
        return checks
    if isinstance(checks, dict):
        unknown = set(checks) - {"expect", "check"}
        if unknown:
            raise ExportError(f"checks takes the keys 'expect' and 'check', not {', '.join(sorted(unknown))}")
        return ExportChecks(tuple(_strings(checks.get("expect"))), tuple(_strings(checks.get("check"))))
    return ExportChecks(check=tuple(_strings(checks)))


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


__all__ = ["LIVE_ENV", "ExportError", "ExportChecks", "TurnExporter", "TurnSource", "as_checks", "render_test",
           "exported_test_path", "write_test"]
