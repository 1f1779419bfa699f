"""``%agent tools / allow / deny``: the tools a session offers and their permission."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ..kernel_inputs import cell_tools


def cmd_tools(magics: Any, rest: list[str]) -> None:
    from ...agent.artifacts import artifact_tool
    from ...agent.tools import AgentToolRegistry

    session = magics.manager.current
    registry = AgentToolRegistry(cell_tools(magics.shell.user_ns), permission_mode=magics.permission)
    registry.register(artifact_tool(session.artifacts))
    for name, rule in session.overrides.items():
        (registry.allow if rule == "allow" else registry.deny)(name)
    print(f"permission mode: {registry.permission_mode.value}")
    for spec in registry:
        first = spec.description.splitlines()[0] if spec.description else ""
        print(f"  {spec.name:<16} {spec.effect:<8} {registry.permission_for(spec.name):<6} {first}")


def cmd_allow(magics: Any, rest: list[str]) -> None:
    _override(magics, rest, "allow")


def cmd_deny(magics: Any, rest: list[str]) -> None:
    _override(magics, rest, "deny")


def _override(magics: Any, rest: list[str], rule: str) -> None:
    if len(rest) != 1:
        raise UsageError(f"%agent {rule} TOOL: give exactly one tool name")
    session = magics.manager.current
    session.overrides[rest[0]] = rule
    print(f"session {session.name}: {rest[0]} is now {'always allowed' if rule == 'allow' else 'denied'}")
