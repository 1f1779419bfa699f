"""A cell's provider with its recordings: replay what matches, record what runs (issue #24).

The cell's provider becomes a ``ReplayingProvider`` (``providers/replay``) over the live
provider and the cell's candidate recordings (``recordings.py``). When the live provider
cannot be built here (no key on this machine, a provider variable the notebook no longer
defines), the turn still runs from its recording; only going live needs it. After the
turn, the recording goes into the output's metadata (``output_metadata``), so the saved
notebook carries it; the recording integration puts it in the event log too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..providers.replay import ReplayingProvider, cell_key
from .cell_identity import cell_flags, current_cell_id
from .recordings import candidates_for, notebook_files, notebook_path

# The settings that change what a request asks (the fingerprint's flags; see fingerprint.py).
REQUEST_FLAGS = ("provider", "model", "think", "strategy", "reflect_every", "compaction", "context_budget",
                 "thinking_phase", "top_k", "citations", "skill", "web", "memory")


def replay_mode(options: Any, args: Any) -> str:
    """``--rerun`` is ``--replay off``; otherwise the flag or ``AgentMagics.replay``."""
    return "off" if getattr(args, "rerun", False) else str(options.replay)


def cell_source(line: str, cell: str, magic: str = "%%agent") -> str:
    """The cell as its recordings know it: the magic's flags (``cell_flags``: without
    ``--replay``, ``--rerun`` or ``--append``, adding one must still find the cell's
    recording) and the prompt as written."""
    return f"{magic} {' '.join(cell_flags(line))}\n{cell.strip()}"


def kernel_notebooks(magics: Any, user_ns: dict[str, Any]) -> list[Path]:
    """The notebook files whose saved recordings this kernel reads (``recordings.py``)."""
    return notebook_files(notebook_path(user_ns, str(getattr(magics, "notebook", "") or "")))


def request_flags(options: Any) -> dict[str, Any]:
    """The turn's settings that shape its requests (``REQUEST_FLAGS``), for the fingerprint."""
    return {name: getattr(options, name, None) for name in REQUEST_FLAGS}


def replaying_provider(magics: Any, options: Any, args: Any, source: str, user_ns: dict[str, Any],
                       resolve: Callable[[], Any]) -> ReplayingProvider:
    """The cell's provider: its recordings first (unless off), the live one from a mismatch."""
    mode = replay_mode(options, args)
    candidates = []
    if mode != "off":
        candidates = candidates_for(source, current_cell_id(magics.shell), kernel_notebooks(magics, user_ns),
                                    magics.manager.event_log)
    unavailable = ""
    try:
        live = resolve()
    except UsageError as exc:
        if not candidates and mode != "strict":
            raise
        live, unavailable = None, str(exc).removeprefix("%%agent: ")
    return ReplayingProvider(live, candidates, mode=mode, flags=request_flags(options), cell=cell_key(source),  # type: ignore[arg-type]
                             unavailable=unavailable)


def output_metadata(provider: Any) -> dict[str, Any]:
    """``{"jupyter_brain": {"recording": ...}}`` for the turn's output (nothing without calls)."""
    if not isinstance(provider, ReplayingProvider) or not provider.calls:
        return {}
    return {"jupyter_brain": {"recording": provider.recording().dump()}}


def approver_with_recording(approver: Any, provider: ReplayingProvider) -> Any:
    """The cell's approver, except for a replayed tool call that ran when the turn was
    recorded: the same call after the same conversation, allowed then, runs again without a
    card (so Run All and headless runs replay what the user approved). Anything else asks."""
    from ..agent.executor import Approval

    def approve(call: Any, spec: Any, arguments: Any) -> Any:
        if provider.ran_when_recorded(str(call.id)):
            return Approval(True, by="policy", channel="replay", reason="allowed when this turn was recorded")
        return approver(call, spec, arguments)

    approve.timeout_s = getattr(approver, "timeout_s", 0)  # type: ignore[attr-defined]  # the harness reads it
    return approve
