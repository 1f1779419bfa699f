"""A ``%%compare`` cell replays too: every run of it (strategy × repeat) has its recording.

Without this, Run All of a saved comparison calls the model for every run again (4
strategies × 2 runs: 8 turns). Each run's provider becomes a ``ReplayingProvider`` over the
live one, with the recordings of *that run*: its key is the cell's source plus the run's
strategy and number, so a strategy's second run never replays its first run's answers.
The cell's output carries all runs' recordings (``metadata.jupyter_brain.recordings``);
the recording integration puts each in the event log too. Where the live provider cannot
be built (no key on this machine), the comparison still runs when every run has a
recording; only going live needs it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError

from ..providers.replay import ReplayingProvider, cell_key
from .recordings import candidates_for
from .replay import cell_source, kernel_notebooks, replay_mode, request_flags

LiveFactory = Callable[[str, int], Any]


def run_source(source: str, strategy: str, run: int) -> str:
    """The source one run's recordings are keyed by (``cell_key`` of it)."""
    return f"{source}\n# run {run} of {strategy}"


class ReplayingRuns:
    """``(strategy, run) -> provider`` for ``run_comparison``: each run's recordings first,
    its live provider from the first mismatch. Keeps the providers for the cell's output."""

    def __init__(self, live: LiveFactory | None, source: str, candidates: Callable[[str], list[Any]], *,
                 mode: str, flags: dict[str, Any], unavailable: str = "") -> None:
        self.live, self.source, self.candidates = live, source, candidates
        self.mode, self.flags, self.unavailable = mode, flags, unavailable
        self.providers: dict[tuple[str, int], ReplayingProvider] = {}
        self._lock = threading.Lock()

    def __call__(self, strategy: str, run: int) -> ReplayingProvider:
        source = run_source(self.source, strategy, run)
        found = self.candidates(source) if self.mode != "off" else []
        live = self.live(strategy, run) if self.live is not None else None
        provider = ReplayingProvider(live, found, mode=self.mode, flags={**self.flags, "strategy": strategy},  # type: ignore[arg-type]
                                     cell=cell_key(source), unavailable=self.unavailable)
        with self._lock:
            self.providers[(strategy, run)] = provider
        return provider

    def output_metadata(self) -> dict[str, Any]:
        """``{"jupyter_brain": {"recordings": [...]}}``: every run that called a model."""
        with self._lock:
            providers = [self.providers[k] for k in sorted(self.providers)]
        runs = [p.recording().dump() for p in providers if p.calls]
        return {"jupyter_brain": {"recordings": runs}} if runs else {}


def replaying_runs(magics: Any, options: Any, args: Any, line: str, cell: str, strategies: list[str],
                   runs: int, build_live: Callable[[], LiveFactory]) -> ReplayingRuns:
    """The comparison's provider factory. ``build_live`` builds (and checks) the live
    providers; its usage error stands unless every run can replay (then it is kept as the
    reason a run could not go live)."""
    mode = replay_mode(options, args)
    source = cell_source(line, cell, "%%compare")
    user_ns = magics.shell.user_ns if magics.shell is not None else {}
    files = kernel_notebooks(magics, user_ns) if mode != "off" else []
    event_log = magics.manager.event_log

    def candidates(run_key_source: str) -> list[Any]:
        return candidates_for(run_key_source, None, files, event_log)

    flags = request_flags(options)
    try:
        live: LiveFactory | None = build_live()
        unavailable = ""
    except UsageError as exc:
        every_run_recorded = mode != "off" and all(
            candidates(run_source(source, s, r)) for s in strategies for r in range(1, runs + 1))
        if not every_run_recorded:
            raise
        live, unavailable = None, str(exc).removeprefix("%%compare: ")
    return ReplayingRuns(live, source, candidates, mode=mode, flags=flags, unavailable=unavailable)
