"""``%agent eval FILE``: run an eval set (docs: guide/compare-and-eval.md); the work is ``notebook/eval_cell.py``."""

from __future__ import annotations

from typing import Any


def cmd_eval(magics: Any, rest: list[str]) -> Any:
    from ..eval_cell import run_eval_command

    return run_eval_command(magics, rest)
