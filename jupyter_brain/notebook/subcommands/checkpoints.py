"""``%agent checkpoints / undo``: the files the agent wrote, and putting them back."""

from __future__ import annotations

import os
from typing import Any

from ..parsers import subcommand_parser


def cmd_checkpoints(magics: Any, rest: list[str]) -> None:
    """The files the agent changed, newest first, with what each was before."""
    from ...agent.checkpoints import display_path
    from ...tools.files import human_size

    args = subcommand_parser("checkpoints", limit=True).parse_args(rest)
    name = args.session or magics.manager.current.name
    found = magics.checkpoint_store().list(session_id=name, limit=args.limit)
    if not found:
        print(f"No checkpoints yet (session {name}).")
        return
    numbers = {t.turn_id: i for i, t in enumerate(magics.manager.event_log.turns(name), 1)}

    def size(n: int | None) -> str:
        return "-" if n is None else human_size(n)

    rows = [("time", "turn", "action", "size", "path")]
    for cp in found:
        turn = f"{numbers[cp.turn_id]} ({cp.turn_id[:6]})" if cp.turn_id in numbers else cp.turn_id[:12]
        action = cp.action + (" (undone)" if cp.undone else "")
        sizes = size(cp.after_size) if not cp.existed else f"{size(cp.size)} -> {size(cp.after_size)}"
        rows.append((cp.when, turn, action, sizes, display_path(cp.path, os.getcwd())))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    print(f"Checkpoints of session {name} (newest first):")
    for row in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row[:4], widths, strict=True)) + "  " + row[4])


def cmd_undo(magics: Any, rest: list[str]) -> None:
    """Put back the files the session's last turn with writes changed."""
    args = subcommand_parser("undo", force=True).parse_args(rest)
    name = args.session or magics.manager.current.name
    report = magics.checkpoint_store().undo_last_turn(name, force=args.force, root=os.getcwd())
    numbers = {t.turn_id: i for i, t in enumerate(magics.manager.event_log.turns(name), 1)}
    if report.turn_id in numbers:
        report.turn_label = str(numbers[report.turn_id])  # "turn 3" reads better than an id
    print(report)
