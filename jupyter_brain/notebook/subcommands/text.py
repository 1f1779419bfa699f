"""Small text helpers shared by the subcommands: an optional count argument, clipping."""

from __future__ import annotations

from IPython.core.error import UsageError


def count_arg(rest: list[str], command: str, *, default: int) -> int:
    """``%agent <command> [N]``: N, a positive number, or ``default``."""
    if not rest:
        return default
    if not rest[0].isdigit() or int(rest[0]) < 1:
        raise UsageError(f"%agent {command} [N]: N must be a positive number, got {rest[0]!r}")
    return int(rest[0])


def clip(text: object, n: int = 100) -> str:
    """One line of at most ``n`` characters (whitespace collapsed, ``…`` when cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"
