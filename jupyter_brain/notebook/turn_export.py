"""What a turn's test needs, gathered when its ``%%agent`` cell runs (#27).

``remember_turn`` is called once per turn by the cell: the cell's flags and prompt as
written, the code cells the kernel ran before it (its *setup*: what recreates the
variables the turn's tools and a ``--check`` read), the kernel's settings that differ
from their defaults, the history the turn was sent and its recording. The ``TurnResult``
keeps them (``to_test()``), and so does the kernel, by turn id, for ``%agent export-test N``.
An earlier kernel's turn (a resumed session) is rebuilt from the event log instead
(``source_from_log``): its recording, its prompt as sent, its request flags and the history
before it; its setup cells are not known there, so the test starts with none.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from ..evals.export_test import TurnExporter, TurnSource, masked_source
from ..providers.capabilities import provider_secrets
from .cell_identity import cell_flags, without_flags

KEPT_TURNS = 200  # the kernel's most recent turns that can be exported
SESSION_FLAGS = ("--session",)  # the exported test seeds its own session with the turn's history
SESSION_SWITCHES = ("--new",)
# Lines of a setup cell left out: the extension itself (the test loads it) and its commands.
OUR_LINES = ("%agent", "%load_ext jupyter_brain", "%reload_ext jupyter_brain", "%unload_ext jupyter_brain")
OUR_CELLS = ("%%agent", "%%compare")

CODE_TOOLS = ("run_python",)  # the tools whose code changed the kernel's namespace

_turns: OrderedDict[str, TurnSource] = OrderedDict()


def exported_flags(line: str) -> str:
    """The cell's flags for the test: not how it ran (``--replay``, ``--rerun``, ``--append``)
    nor which session (the test makes its own, with the turn's history)."""
    return " ".join(without_flags(cell_flags(line), switches=SESSION_SWITCHES, options=SESSION_FLAGS))


def ran_code(magics: Any) -> OrderedDict[int, list[str]]:
    """This kernel's ``In [n]`` of each ``%%agent`` cell → the code its turns ran."""
    found = getattr(magics, "_ran_code", None)
    if found is None:
        found = OrderedDict()
        magics._ran_code = found
    return found


def setup_cells(shell: Any, agent_code: Mapping[int, list[str]] | None = None) -> list[str]:
    """The code cells this kernel ran before the running one, as typed, without ours; an
    earlier ``%%agent`` cell is replaced by the code its turn ran (``run_python``), which
    made variables a later turn may read."""
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    count = getattr(shell, "execution_count", 0)
    if not isinstance(history, list) or not isinstance(count, int):
        return []
    cells: list[str] = []
    for number, raw in enumerate(history[1:count], start=1):
        text = str(raw)
        if text.lstrip().startswith(OUR_CELLS):
            cells.extend(f"# run by the agent's turn in In [{number}]\n{code}"
                         for code in (agent_code or {}).get(number, []))
            continue
        kept = [ln for ln in text.splitlines() if not ln.strip().startswith(OUR_LINES)]
        code = "\n".join(kept).strip()
        if code:
            cells.append(code)
    return cells


def changed_settings(magics: Any) -> dict[str, Any]:
    """The kernel's ``AgentMagics`` settings that are not at their defaults (``replay`` and
    the folders aside: the test chooses those)."""
    from ..settings import SETTINGS

    left_out = {"replay", "data_dir", "notebook", "workspace_dir", "approval_timeout"}
    out = {}
    for name, setting in SETTINGS.items():
        value = getattr(magics, name, setting.default)
        if name not in left_out and value != setting.default and isinstance(value, (str, int, float, bool)):
            out[name] = value
    return out


def remember_turn(magics: Any, line: str, cell: str, result: Any, provider: Any, session: Any) -> None:
    """Keep what the turn's test needs (see the module's docstring); never fails the cell."""
    try:
        ids = [t.turn_id for t in session.turns()]
        number = ids.index(result.turn_id) + 1 if result.turn_id in ids else len(ids)
        recording = provider.recording().dump() if getattr(provider, "calls", None) else None
        new = len(result.new_messages)
        source = TurnSource(
            session=result.session_id, turn_id=result.turn_id, turn_number=number, flags=exported_flags(line),
            prompt=cell.strip(), setup=setup_cells(magics.shell, ran_code(magics)), config=changed_settings(magics),
            history=list(result.messages[: len(result.messages) - new]) if new else list(result.messages),
            recording=recording, answer=result.text, status=str(result.status))
        source = masked_source(source, provider_secrets(getattr(provider, "live", None) or provider))
    except Exception:  # noqa: BLE001 - exporting is a convenience; the turn's own result stands
        return
    result._export = TurnExporter(source)
    ran = [str((c.arguments or {}).get("code") or "") for c in result.tool_calls
           if c.name in CODE_TOOLS and c.status == "ok" and isinstance(c.arguments, dict)]
    count = getattr(magics.shell, "execution_count", None)
    if isinstance(count, int) and any(ran):
        kept = ran_code(magics)
        kept.setdefault(count, []).extend(code for code in ran if code.strip())
        while len(kept) > KEPT_TURNS:
            kept.popitem(last=False)
    _turns[result.turn_id] = source
    while len(_turns) > KEPT_TURNS:
        _turns.popitem(last=False)


def remembered(turn_id: str) -> TurnSource | None:
    return _turns.get(turn_id)


class NotExportable(ValueError):
    """Why an earlier kernel's turn cannot be rebuilt from the log (one line)."""


def source_from_log(event_log: Any, session: Any, turn: Any, number: int) -> TurnSource:
    """An earlier kernel's turn as far as the event log knows it (see the module's docstring)."""
    recordings = [r for r in event_log.records(RECORD_KIND) if r.get("turn_id") == turn.turn_id]
    if not recordings:
        raise NotExportable(f"turn {number} has no recording in the event log (it made no model call, or it was "
                            "not a %%agent cell's turn)")
    recording = dict(recordings[-1].get("recording") or {})
    tags = list(getattr(session.cells, "tags", []))
    if turn.turn_id not in tags:
        raise NotExportable(f"turn {number} is no longer in the session's history (a re-run replaced it), so the "
                            "history it was sent is not known")
    flags, config = flags_of(recording.get("flags") or {})
    return TurnSource(session=session.name, turn_id=turn.turn_id, turn_number=number, flags=flags,
                      prompt=str(turn.user_message or ""), setup=[], config=config,
                      history=list(session.history[: tags.index(turn.turn_id)]), recording=recording,
                      answer=str(turn.text or ""), status=str(getattr(turn, "status", "") or ""))


RECORD_KIND = "recording"  # the event log's recordings (agent/integrations/recording)


def flags_of(request_flags: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """A recording's request flags as an ``%%agent`` line (and the settings that have no
    flag, as ``CONFIG``): the same flags give the same requests."""
    from ..settings import SETTINGS

    words: list[str] = []
    config: dict[str, Any] = {}
    for name, value in request_flags.items():
        setting = SETTINGS.get(name)
        if setting is None or value is None:
            continue
        if setting.flag is None:
            if value != setting.default:
                config[name] = value
        elif setting.type is bool:
            if value != setting.default:
                words.append(setting.flag if value else (setting.off_flag or f"--no-{setting.flag[2:]}"))
        elif value != setting.default or name == "provider":
            words += [setting.flag, str(value)]
    return " ".join(words), config


__all__ = ["NotExportable", "changed_settings", "exported_flags", "flags_of", "remember_turn", "remembered",
           "setup_cells", "source_from_log"]
