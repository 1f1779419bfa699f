"""The errors of the user's cells, remembered for ``%agent fix``.

A ``post_run_cell`` hook keeps the last few failing cells (number, source, the exception
and its traceback without IPython's own frames). ``%agent fix`` reads them from any
front-end; nothing here depends on the JupyterLab extension.
"""

from __future__ import annotations

import traceback
from collections import deque
from dataclasses import dataclass
from typing import Any

KEEP = 20  # failing cells remembered per kernel


@dataclass(frozen=True)
class CellError:
    execution_count: int
    source: str
    error_type: str
    message: str
    traceback: str  # plain text, the user's frames only


class CellErrors:
    """Registered on ``post_run_cell`` by ``%load_ext jupyter_brain``."""

    def __init__(self) -> None:
        self._errors: deque[CellError] = deque(maxlen=KEEP)

    def __call__(self, result: Any) -> None:
        error = getattr(result, "error_in_exec", None)
        info = getattr(result, "info", None)
        source = getattr(info, "raw_cell", None) if info is not None else None
        if error is None or not source or source.lstrip().startswith(("%agent", "%%agent", "%%compare")):
            return
        count = getattr(result, "execution_count", None) or 0
        self._errors.append(CellError(int(count), source, type(error).__name__, str(error), user_traceback(error)))

    def latest(self) -> CellError | None:
        return self._errors[-1] if self._errors else None

    def of_cell(self, execution_count: int) -> CellError | None:
        return next((e for e in reversed(self._errors) if e.execution_count == execution_count), None)

    def cells(self) -> list[int]:
        return [e.execution_count for e in self._errors]


def user_traceback(error: BaseException) -> str:
    """The traceback without the frames of IPython's own machinery (run_code, exec)."""
    frames = traceback.extract_tb(error.__traceback__)
    user = [f for f in frames if "/IPython/" not in f.filename.replace("\\", "/")]
    lines = traceback.format_list(user) if user else []
    lines += traceback.format_exception_only(type(error), error)
    return "Traceback (most recent call last):\n" + "".join(lines) if user else "".join(lines)
