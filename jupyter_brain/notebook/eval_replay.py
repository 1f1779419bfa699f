"""An eval's runs replay too: each task × config × repeat has its own recording.

Like a ``%%compare`` cell's runs (``compare_replay.py``): each run's provider is a
``ReplayingProvider`` over the live one, with the recordings of *that run*, keyed by the
file's name, the task (its id, prompt and setup), the config (its name and settings) and
the repeat. Editing a task or a config sends that run live again; the others replay. The
``%agent eval`` output carries every run's recording (``metadata.jupyter_brain.recordings``)
and the recording integration puts each in the event log, so a saved notebook's eval
runs offline.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from ..providers.replay import ReplayingProvider, cell_key
from .recordings import candidates_for
from .replay import kernel_notebooks, request_flags

LiveProvider = Callable[[Any], Any]  # config -> the live provider of one run (or raises UsageError)


def run_source(file_name: str, task: Any, config: Any, repeat: int) -> str:
    """The source one run's recordings are keyed by (``cell_key`` of it)."""
    flags = json.dumps(config.flags, sort_keys=True, default=str)
    return (f"%agent eval {file_name}\n# task {task.id}\n{task.setup.strip()}\n{task.prompt.strip()}\n"
            f"# config {config.name} {flags}\n# run {repeat}")


class EvalRecordings:
    """``(task, config, repeat) -> provider`` for the eval runner; keeps the providers
    for the output's metadata."""

    def __init__(self, magics: Any, file_name: str, mode: str, live: LiveProvider,
                 options: Callable[[Any], Any]) -> None:
        self.file_name, self.mode, self.live, self.options = file_name, mode, live, options
        user_ns = magics.shell.user_ns if magics.shell is not None else {}
        self.files = kernel_notebooks(magics, user_ns) if mode != "off" else []
        self.event_log = magics.manager.event_log
        self.providers: list[ReplayingProvider] = []
        self._lock = threading.Lock()

    def __call__(self, task: Any, config: Any, repeat: int) -> ReplayingProvider:
        from IPython.core.error import UsageError

        source = run_source(self.file_name, task, config, repeat)
        found = candidates_for(source, None, self.files, self.event_log) if self.mode != "off" else []
        try:
            live, unavailable = self.live(config), ""
        except UsageError as exc:  # no key here: the run may still replay; going live says why
            if not found:
                raise
            live, unavailable = None, str(exc).removeprefix("%agent eval: ")
        provider = ReplayingProvider(live, found, mode=self.mode, flags=request_flags(self.options(config)),  # type: ignore[arg-type]
                                     cell=cell_key(source), unavailable=unavailable)
        with self._lock:
            self.providers.append(provider)
        return provider

    def output_metadata(self) -> dict[str, Any]:
        """``{"jupyter_brain": {"recordings": [...]}}``: every run that called a model."""
        with self._lock:
            runs = [p.recording().dump() for p in self.providers if p.calls]
        return {"jupyter_brain": {"recordings": runs}} if runs else {}
