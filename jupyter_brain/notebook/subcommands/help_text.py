"""``%agent help``: one line per subcommand, then the ``%%agent`` flags."""

from __future__ import annotations

from typing import Any

from ..parsers import agent_parser

SUBCOMMANDS = {
    "status": "the current session, its settings and context use",
    "context": "the last request's tokens against the context budget, the history's size, and where the AGENTS.md "
               "and Agent Skills come from",
    "sessions": "list sessions (this kernel's and the event log's)",
    "new [NAME]": "start a new session and make it current",
    "use NAME": "switch to a session (reopens it from the event log after a restart)",
    "reset": "clear the current session's history",
    "history [N]": "the last N messages of the current session",
    "tools": "the tools the agent can use, with their permission",
    "allow TOOL / deny TOOL": "always allow / never allow a tool in this session",
    "cost": "tokens and cost per turn and in total; --team: your teams' spending today against the policy's caps",
    "policy": "the admin's policy in force and its file (README: For admins)",
    "log [N]": "the last N events of the current session",
    "replay [TURN]": "re-render a past turn (number or id) from the event log",
    "fix [N] [--apply]": "fix the last failing cell (or In [N]) with the agent: shows a diff; --apply adds it below",
    "inspect [TURN] [--full]": "the last request a turn sent: system prompt, workspace, history, tools, tokens",
    "inspect outside [--full]": "what outside agents (MCP endpoint) did here: each session's calls, arguments, approvals, results",
    "compare-history": "past %%compare runs and the winner marked for each",
    "compare-best STRATEGY [N]": "record STRATEGY as the winner of comparison N (default: the latest)",
    "decisions [N] [--session NAME]": "the last N decision records: per turn (model, tools, status, why) and Mark best",
    "checkpoints [--session NAME] [--limit N]": "files the agent wrote, as they were before each write",
    "undo [--session NAME] [--force]": "put back the files of the session's last turn with writes",
    "config [KEY=VALUE ...]": "show or set this kernel's defaults (provider, model, think, ...)",
    "mcp ACTION": "MCP servers: add, list, remove, restart; their resources, read, prompts (`%agent mcp help`)",
    "remember TEXT": "keep a fact for later turns of any session in this folder (AgentMagics.memory)",
    "memory [QUERY]": "the memories kept in this folder, or those matching QUERY with their scores",
    "forget ID": "delete a memory (its id from %agent memory, e.g. m3)",
    "skills": "the Agent Skills (.agents/skills/NAME/SKILL.md …) offered to the model, and the skill files "
              "(.jupyter_brain/skills/, ./skills/) a cell can use with --skill NAME",
    "hooks [add|remove NAME | clear]": "attach the TurnHook in variable NAME to the next %%agent cells (docs: guide/hooks.md)",
    "eval FILE [--runs N]": "run an eval set's tasks under its configs (--configs, --strategies): success rates, "
                            "a rate-vs-cost plot, a DataFrame (docs: guide/compare-and-eval.md; --help)",
    "export-test N [PATH]": "turn N (-1: the last) as a pytest file replaying its recording; --live, --expect, --check",
    "help": "this help",
}


def cmd_help(magics: Any, rest: list[str]) -> None:
    width = max(len(k) for k in SUBCOMMANDS)
    print("%agent SUBCOMMAND\n")
    for key, text in SUBCOMMANDS.items():
        print(f"  %agent {key:<{width}}  {text}")
    print()
    print(agent_parser().format_help())
