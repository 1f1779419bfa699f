"""The flags of ``%%agent``, ``%%compare`` and ``%agent`` subcommands, as argparse parsers.

Every flag that sets a setting is built from ``jupyter_brain.settings`` (its type,
allowed values, metavar and help); only the cell's own arguments (``--session``,
``--out``, ``--strategies``, ...) are written here. A bad flag becomes a one-line IPython
``UsageError`` naming the choices (or pointing at ``--help``), never a ``SystemExit``.

The parsers are built on first use (``agent_parser()``, ``compare_parser()``): the
strategy choices come from the agent's names module, which ``%load_ext`` does not load.
"""

from __future__ import annotations

import argparse
import difflib
import shlex
from typing import Any

from IPython.core.error import UsageError

from ..settings import SETTINGS, strategy_choices


class LiteralHelpFormatter(argparse.HelpFormatter):
    """Help texts as written: a bare ``%`` (``%agent skills``) is text, not a ``%`` format
    (argparse would print its parameter dict); ``%(default)s`` still works."""

    def _expand_help(self, action: argparse.Action) -> str:
        text = self._get_help_string(action) or ""
        return super()._expand_help(action) if "%(" in text else text


class UsageParser(argparse.ArgumentParser):
    """argparse that reports errors as IPython UsageErrors (``<prog>: <message>``) instead of exiting."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", LiteralHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        """One line: what was wrong (a close flag name for a misspelt one), then where the
        flags are listed (``%%agent --help``), or the short usage of a parser without help."""
        if "--help" in self._option_string_actions:
            where = f"see {self.prog} --help"
        else:
            where = "usage: " + " ".join(self.format_usage().split()).removeprefix("usage: ")
        hints = "; ".join(h for h in (self._did_you_mean(message), where) if h)
        raise UsageError(f"{self.prog}: {message} ({hints})")

    def _did_you_mean(self, message: str) -> str:
        """``--thnk`` → ``did you mean --think?``, for the first unknown flag that resembles one."""
        if not message.startswith("unrecognized arguments:"):
            return ""
        flags = [o for o in self._option_string_actions if o.startswith("--")]
        for word in message.split(":", 1)[1].split():
            close = difflib.get_close_matches(word, flags, n=1, cutoff=0.75) if word.startswith("--") else []
            if close:
                return f"did you mean {close[0]}?"
        return ""

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        if message:
            raise UsageError(message)
        raise UsageError(self.format_help())


def split_flags(line: str, prog: str) -> list[str]:
    """The flag line as words (shell quoting); a stray quote is a usage error."""
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"{prog}: cannot parse the flags: {exc}") from None


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _lower(text: str) -> str:
    return text.strip().lower()


def add_setting(parser: argparse.ArgumentParser, name: str, **override: Any) -> None:
    """The flag of setting ``name``; ``override`` changes its help, choices or default for one cell.

    The flag checks the type and the sign at parse time; ``AgentOptions`` checks the
    bounds once the kernel defaults are merged in (so both get the same message).
    """
    s = SETTINGS[name]
    if s.flag is None:
        raise ValueError(f"setting {name!r} has no cell flag")
    help_text = override.pop("help", s.help)
    if s.type is bool:
        group = parser.add_mutually_exclusive_group()
        group.add_argument(s.off_flag or f"--no-{s.flag[2:]}", dest=name, action="store_false", default=None,
                           help=s.off_help)
        group.add_argument(s.flag, dest=name, action="store_true", help=help_text)
        return
    options: dict[str, Any] = {"dest": name, "help": help_text}
    if s.allowed():
        options.update(type=_lower, choices=s.allowed())
    elif s.type is int:
        options["type"] = _non_negative_int if s.ge == 0 else _positive_int
    elif s.type is float:
        options["type"] = _positive_float
    if s.metavar:
        options["metavar"] = s.metavar
    options.update(override)
    parser.add_argument(s.flag, **options)


def build_parser() -> UsageParser:
    """``%%agent [flags]``."""
    p = UsageParser(prog="%%agent", add_help=False, description="Run one agent turn on the cell's prompt.")
    for name in ("think", "reflect_every", "strategy", "max_steps", "timeout", "provider", "model"):
        add_setting(p, name)
    p.add_argument("--session", metavar="NAME", help="session to run in (created if new)")
    p.add_argument("--new", action="store_true", help="start a fresh session first")
    p.add_argument("--append", action="store_true", help="keep this cell's earlier turn too (ask again)")
    for name in ("permission", "stream", "compaction", "context_budget"):
        add_setting(p, name)
    add_setting(p, "thinking_phase", nargs="?", const="summary")  # --thinking-phase alone: summary
    add_setting(p, "cells")
    for name in ("top_k", "citations", "skill"):  # the turn's context pack, Sources, skill file
        add_setting(p, name)
    add_setting(p, "web")  # --web on|off: the turn's web search (agent/web)
    # MCP servers' resources and prompts (notebook/mcp_cell.py)
    p.add_argument("--resource", action="append", default=[], metavar="SERVER:URI",
                   help="attach an MCP server's resource to this turn as context (repeatable; %agent mcp resources)")
    p.add_argument("--mcp-prompt", metavar="SERVER:NAME",
                   help="start the turn from an MCP server's prompt (%agent mcp prompts); the cell body follows it")
    p.add_argument("--arg", action="append", default=[], metavar="KEY=VALUE", help="an argument of --mcp-prompt (repeatable)")
    for name in ("max_cost_per_turn", "max_tokens_per_turn"):  # --max-cost, --max-tokens-total (agent/cost_caps)
        add_setting(p, name)
    add_setting(p, "replay")  # --replay auto|off|strict: the cell's recording (notebook/replay.py)
    add_setting(p, "engine")  # --engine NAME: an outside agent over ACP (notebook/engine_cell.py)
    p.add_argument("--rerun", action="store_true", help="call the model even where a recording matches (= --replay off)")
    p.add_argument("--out", metavar="VAR", help="also store the TurnResult in this variable")
    p.add_argument("-h", "--help", action="store_true", help="show this help")
    return p


def _strategy_list(text: str) -> list[str]:
    choices = strategy_choices()
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in choices]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"unknown strategy {', '.join(map(repr, bad)) or '(none given)'}; choose from {', '.join(choices)}")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"a strategy is listed twice: {text}")
    return names


# What parallel runs may do: nobody can answer an approval card of a background run.
COMPARE_PERMISSIONS = ("read-only", "auto")


def build_compare_parser() -> UsageParser:
    """``%%compare [flags]``: the settings a comparison takes, worded per run."""
    from ..agent.strategies.names import STRATEGY_NAMES

    every = ",".join(STRATEGY_NAMES)
    p = UsageParser(prog="%%compare", add_help=False,
                    description="Run the cell's prompt under several strategies at once and compare them.")
    p.add_argument("--strategies", type=_strategy_list, default=list(STRATEGY_NAMES),
                   metavar="S1,S2,...", help=f"strategies to compare (default {every})")
    add_setting(p, "think")
    add_setting(p, "reflect_every", help="reflect every N steps")
    add_setting(p, "provider", help="a provider name, a variable holding a provider, "
                                    "or a variable holding a dict strategy -> provider")
    add_setting(p, "model")
    p.add_argument("--runs", type=_positive_int, default=1, metavar="K", help="runs per strategy (mean and spread)")
    add_setting(p, "permission", choices=COMPARE_PERMISSIONS, default="read-only",
                help="what tools may do (default read-only; nobody can answer 'ask' prompts of parallel runs)")
    add_setting(p, "max_steps", help="model calls allowed per run")
    add_setting(p, "timeout", help="seconds allowed per run")
    add_setting(p, "max_cost_per_turn", help="USD all runs together may spend (a call that could cross it is not made)")
    add_setting(p, "max_tokens_per_turn", help="tokens (input + output) each run may use")
    add_setting(p, "replay")  # each run's recording (notebook/compare_replay.py)
    p.add_argument("--rerun", action="store_true", help="call the model even where a recording matches (= --replay off)")
    # Checks on each run's answer (jupyter_brain/evals, notebook/compare_checks.py).
    p.add_argument("--expect", action="append", default=[], metavar="TEXT",
                   help="the answer must contain TEXT (numbers agree to TEXT's decimals)")
    p.add_argument("--check", action="append", default=[], metavar="EXPR",
                   help="a Python expression, true in the namespace the run left behind ('answer': its text)")
    p.add_argument("--judge", nargs="?", const="", default=None, metavar="RUBRIC",
                   help="a model judges each answer (against RUBRIC): its opinion, billed and capped")
    p.add_argument("--judge-provider", metavar="P", help="the judge's provider (default: --provider)")
    p.add_argument("--check-timeout", type=_positive_float, metavar="S",  # (#27) default AgentMagics.check_timeout
                   help="seconds each --check may take before it fails as timed out")
    p.add_argument("--no-copy", action="store_true",  # (#27) namespace copies: evals/namespace.py
                   help="the runs share your variables instead of each getting a copy (fast; in-place changes reach yours)")
    p.add_argument("--out", metavar="VAR", help="also store the CompareResult in this variable")
    p.add_argument("-h", "--help", action="store_true", help="show this help")
    return p


def subcommand_parser(command: str, *, limit: bool = False, force: bool = False) -> UsageParser:
    """``%agent checkpoints`` / ``%agent undo``: ``--session NAME`` [``--limit N``] [``--force``]."""
    parser = UsageParser(prog=f"%agent {command}", add_help=False)
    parser.add_argument("--session", metavar="NAME", help="session (default: the current one)")
    if limit:
        parser.add_argument("--limit", type=_positive_int, default=20, metavar="N", help="show at most N")
    if force:
        parser.add_argument("--force", action="store_true", help="also overwrite files changed since")
    return parser


_built: dict[str, UsageParser] = {}


def agent_parser() -> UsageParser:
    """The ``%%agent`` parser, built once."""
    if "agent" not in _built:
        _built["agent"] = build_parser()
    return _built["agent"]


def compare_parser() -> UsageParser:
    """The ``%%compare`` parser, built once."""
    if "compare" not in _built:
        _built["compare"] = build_compare_parser()
    return _built["compare"]
