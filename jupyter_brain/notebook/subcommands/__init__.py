"""``%agent SUBCOMMAND``: the subcommands, their one-line help, and the dispatch.

Each theme module holds a few ``(magics, rest) -> None`` handlers that print plain text;
``magics`` is the ``AgentMagics`` instance (its settings, ``manager``, ``shell``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError

from . import (
    checkpoints,
    comparisons,
    config,
    decisions,
    evals,
    export_test,
    fix,
    hooks,
    inspect_request,
    mcp,
    past_turns,
    permissions,
    sessions,
    skills,
    status,
)
from . import memory as memory_cmds
from .help_text import SUBCOMMANDS, cmd_help

Handler = Callable[[Any, list[str]], None]


def cmd_policy(magics: Any, rest: list[str]) -> None:
    """The admin's policy in force and the file it came from (issue #38)."""
    from ..governance import kernel_governance

    print(kernel_governance(magics).describe())

# Keys with "_" for "-": `%agent compare-best` and `%agent compare_best` are the same.
HANDLERS: dict[str, Handler] = {
    "status": status.cmd_status,
    "context": status.cmd_context,
    "sessions": sessions.cmd_sessions,
    "new": sessions.cmd_new,
    "use": sessions.cmd_use,
    "reset": sessions.cmd_reset,
    "history": sessions.cmd_history,
    "tools": permissions.cmd_tools,
    "allow": permissions.cmd_allow,
    "deny": permissions.cmd_deny,
    "cost": past_turns.cmd_cost,
    "log": past_turns.cmd_log,
    "replay": past_turns.cmd_replay,
    "compare_history": comparisons.cmd_compare_history,
    "compare_best": comparisons.cmd_compare_best,
    "decisions": decisions.cmd_decisions,
    "checkpoints": checkpoints.cmd_checkpoints,
    "undo": checkpoints.cmd_undo,
    "config": config.cmd_config,
    "mcp": mcp.cmd_mcp,
    "remember": memory_cmds.cmd_remember,
    "memory": memory_cmds.cmd_memory,
    "forget": memory_cmds.cmd_forget,
    "inspect": inspect_request.cmd_inspect,
    "fix": fix.cmd_fix,
    "skills": skills.cmd_skills,
    "hooks": hooks.cmd_hooks,
    "policy": cmd_policy,
    "eval": evals.cmd_eval,
    "export_test": export_test.cmd_export_test,
    "help": cmd_help,
}


def run_subcommand(magics: Any, line: str) -> Any:
    """``%agent`` with a line: the first word picks the handler (no word: ``help``)."""
    free = line.split(None, 1)
    if free and free[0].lower() in memory_cmds.FREE_TEXT:  # `%agent remember TEXT`: TEXT as typed (it's)
        return HANDLERS[free[0].lower()](magics, free[1:])
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"%agent: {exc}") from None
    if not words:
        words = ["help"]
    command, rest = words[0].lower(), words[1:]
    handler = HANDLERS.get(command.replace("-", "_"))
    if handler is None:
        names = ", ".join([*(s.split()[0] for s in SUBCOMMANDS), "deny"])
        raise UsageError(f"%agent: unknown subcommand {command!r}; choose one of: {names}")
    return handler(magics, rest)
