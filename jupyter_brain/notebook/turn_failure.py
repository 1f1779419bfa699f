"""A turn that did not get its answer fails its cell, the way a failing cell does in Jupyter.

Run All stops at a failed cell and ``jupyter nbconvert --execute`` / papermill exit
non-zero, but only when the cell raises. ``AgentMagics.fail_on`` names the turn statuses
that make a ``%%agent`` cell raise ``AgentTurnFailed`` once the turn's view (and its
Markdown transcript) is shown and ``_agent`` is set. The error is one line — IPython
prints an exception's ``_render_traceback_`` instead of a traceback — and it is a real
``error`` output, so the execute reply, nbclient, papermill and JupyterLab all see a
failed cell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from IPython.core.error import UsageError

# Statuses a cell may fail on (a TurnStatus, and "budget" from the cost caps); "completed" never.
FAILABLE = ("error", "timeout", "budget", "max_steps", "strategy_limit", "interrupted", "refused")
NEVER = ("", "none", "off")  # AgentMagics.fail_on = "none": no status fails a cell
SETTING = "AgentMagics.fail_on"


class AgentTurnFailed(Exception):
    """The cell's turn ended with a status ``AgentMagics.fail_on`` names; shown as one line."""

    def __init__(self, message: str, status: str) -> None:
        super().__init__(message)
        self.status = status

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of a traceback: the class and the message, one line."""
        return [f"\x1b[0;31m{type(self).__name__}\x1b[0m: {self}"]


def fail_statuses(text: str | None) -> frozenset[str]:
    """``"error,timeout,budget,max_steps,interrupted"`` → those statuses; ``"none"`` → none. A name
    that is no status is a usage error naming the choices (before the turn spends anything)."""
    names = [n.strip().lower().replace("-", "_") for n in (text or "").split(",")]
    names = [n for n in names if n not in NEVER]
    bad = [n for n in names if n not in FAILABLE]
    if bad:
        raise UsageError(f"{SETTING}: unknown status {', '.join(map(repr, bad))}; "
                         f"choose from {', '.join(FAILABLE)} (comma-separated), or none")
    return frozenset(names)


def turn_failure(result: Any, fail_on: Iterable[str], *, options: Any = None, prog: str = "%%agent",
                 redact: Callable[[str], str] | None = None) -> AgentTurnFailed | None:
    """The error a finished turn's cell raises, or None when its status is not in ``fail_on``.
    ``options`` (the turn's ``AgentOptions``) gives the limits it names; ``redact`` masks keys
    in an error's text (default: the environment's keys)."""
    status = str(getattr(result, "status", ""))
    if status not in set(fail_on):
        return None
    why = _why(result, max_steps=int(getattr(options, "max_steps", 0) or 0),
               timeout_s=float(getattr(options, "timeout", 0.0) or 0.0), redact=redact)
    return AgentTurnFailed(f"{prog}: the turn stopped ({status}): {why} "
                           f"[{SETTING} fails the cell on it]", status)


def comparison_failure(rows: list[dict[str, Any]], fail_on: Iterable[str]) -> AgentTurnFailed | None:
    """A ``%%compare`` cell fails when *every* run ended with a failing status: a strategy
    that fails is a finding of the comparison, a comparison with no run left is not one."""
    failing = set(fail_on)
    if not rows or not all(str(r.get("status")) in failing for r in rows):
        return None
    statuses = sorted({str(r["status"]) for r in rows})
    first = next((r.get("error") for r in rows if r.get("error")), None)
    from ..agent.redact import Redactor

    detail = f": {_one_line(Redactor()(str(first)))}" if first else ""
    return AgentTurnFailed(f"%%compare: every run stopped ({', '.join(statuses)}){detail} "
                           f"[{SETTING} fails the cell on it]", statuses[0])


def _why(result: Any, *, max_steps: int, timeout_s: float, redact: Callable[[str], str] | None) -> str:
    """Why it stopped, in the decision records' words; an error's (or a cap's) own message, masked."""
    status = str(getattr(result, "status", ""))
    if status in ("max_steps", "timeout", "strategy_limit", "interrupted", "refused"):
        from ..agent.decisions.record import stop_reason

        return stop_reason(result, max_steps=max_steps, timeout_s=timeout_s)
    if redact is None:
        from ..agent.redact import Redactor

        redact = Redactor()
    message = getattr(result, "error", None) or getattr(result, "text", "") or status
    return _one_line(redact(str(message).strip().strip("[]")))


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
