"""``%agent export-test N [PATH] [--live] [--expect TEXT] [--check EXPR]...``: a turn as a
pytest file that replays its recording and asserts the checks (#27; ``evals/export_test.py``)."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ...evals.export_test import ExportChecks, ExportError, write_test
from ..parsers import UsageParser
from ..turn_export import NotExportable, remembered, source_from_log

USAGE = "%agent export-test N [PATH] [--live] [--expect TEXT] [--check EXPR]..."


def export_test_parser() -> UsageParser:
    parser = UsageParser(prog="%agent export-test", add_help=False)
    parser.add_argument("path", nargs="?", default=None, metavar="PATH",
                        help="the test file (default test_turn_N.py here; a folder: test_turn_N.py in it)")
    parser.add_argument("--live", action="store_true", help="the test asks the model instead of replaying")
    parser.add_argument("--expect", action="append", default=[], metavar="TEXT", help="the answer must contain TEXT")
    parser.add_argument("--check", action="append", default=[], metavar="EXPR",
                        help="a Python expression, true in the namespace the turn left ('answer': its text)")
    return parser


def turn_number(word: str, count: int) -> int:
    """``N`` (1 … count, as "Turn N" in the view's header) or ``-1`` for the last turn."""
    try:
        n = int(word)
    except ValueError:
        raise UsageError(f"%agent export-test: N must be a turn number or -1 (the last), got {word!r}") from None
    if count == 0:
        raise UsageError("%agent export-test: the session has no turns yet")
    if n == -1:
        return count
    if not 1 <= n <= count:
        raise UsageError(f"%agent export-test: no turn {n}; the session has turns 1-{count} (or -1: the last)")
    return n


def cmd_export_test(magics: Any, rest: list[str]) -> None:
    if not rest or rest[0].startswith("--") and rest[0] != "-1":
        raise UsageError(f"%agent export-test: which turn? usage: {USAGE}")
    session = magics.manager.current
    turns = session.turns()
    number = turn_number(rest[0], len(turns))
    args = export_test_parser().parse_args(rest[1:])
    source = remembered(turns[number - 1].turn_id)
    if source is None:  # an earlier kernel's turn: from the event log, without setup cells
        try:
            source = source_from_log(magics.manager.event_log, session, turns[number - 1], number)
        except NotExportable as exc:
            raise UsageError(f"%agent export-test: {exc}") from None
        print(f"note: turn {number} ran in an earlier kernel: its setup cells are not known, so the test has "
              "none; add the cells that make the variables its tools and checks read")
    source = source.model_copy(update={"turn_number": number})
    try:
        path = write_test(source, args.path, live=args.live,
                          checks=ExportChecks(tuple(args.expect), tuple(args.check)))
    except ExportError as exc:
        raise UsageError(f"%agent export-test: {exc}") from None
    mode = "asks the model (--live)" if args.live else "replays the recording (no model call)"
    print(f"wrote {path} and {path.with_suffix('.json').name}: turn {number}, {mode}; run: pytest {path}")
