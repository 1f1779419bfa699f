"""What a turn may ask for under a policy: refusals (one line naming the policy) and the
permission mode clamped to the policy's most.

A user's flags and ``%config`` may be stricter than the policy, never looser: a looser
permission mode runs at the policy's, with one line saying so; a provider, a model, web
search, an MCP server or an outside agent the policy does not allow is refused before any
call or connection is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .location import PERMISSIONS

if TYPE_CHECKING:
    from .policy import Policy


class PolicyRefusal(PermissionError):
    """The policy forbids what was asked (its text is the one line the user sees)."""


@dataclass(frozen=True)
class Rules:
    """A loaded policy and the file it came from."""

    policy: Policy
    source: Path

    def refuse(self, what: str) -> PolicyRefusal:
        return PolicyRefusal(f"{what}: not allowed by the policy {self.source}")

    def check_enabled(self) -> None:
        if not self.policy.enabled:
            raise PolicyRefusal(f"the agent is turned off by the policy {self.source} (enabled: false)")

    def permission(self, asked: str, *, explicit: bool) -> tuple[str, str | None]:
        """The mode a turn runs at, and the line to show when the user asked for more."""
        most = self.policy.max_permission
        if PERMISSIONS.index(asked) <= PERMISSIONS.index(most):
            return asked, None
        note = (f"--permission {asked} is looser than the policy {self.source} allows "
                f"(max_permission: {most}): running at {most}") if explicit else None
        return most, note

    def check_provider(self, names: list[str]) -> None:
        allowed = self.policy.allowed_providers
        if allowed is None:
            return
        for name in names:
            if name.strip().lower() not in allowed:
                raise self.refuse(f"provider '{name}' (allowed: {', '.join(allowed) or 'none'})")

    def check_model(self, models: list[str]) -> None:
        patterns = self.policy.allowed_models
        if patterns is None:
            return
        for model in models:
            if not any(fnmatchcase(model, p) or fnmatchcase(model.rsplit("/", 1)[-1], p) for p in patterns):
                raise self.refuse(f"model '{model}' (allowed: {', '.join(patterns) or 'none'})")

    def check_web(self, mode: str) -> None:
        if mode != "off" and not self.policy.web:
            raise self.refuse("web search (--web on)")

    def admits_server(self, name: str) -> str | None:
        """Why an MCP server is left out (None: it may connect)."""
        allowed = self.policy.mcp_servers
        if allowed is None or name in allowed:
            return None
        return f"MCP server '{name}' is not in the policy's mcp_servers ({self.source}): not connected"

    def check_outside_agents(self, what: str = "an outside agent") -> None:
        if not self.policy.outside_agents:
            raise self.refuse(what)


def provider_identity(provider: Any) -> tuple[list[str], list[str]]:
    """The names and models of a provider, every member of a chain (any may answer)."""
    live = getattr(provider, "live", None) or provider  # a replaying provider's live one
    members = getattr(live, "members", None)
    chain = list(members) if isinstance(members, tuple) and members else [live]
    names = [str(getattr(p, "name", "") or type(p).__name__) for p in chain]
    models = [str(getattr(p, "model", "") or "") for p in chain]
    return names, [m for m in models if m]


def unknown_model_patterns(policy: Policy) -> list[str]:
    """The ``allowed_models`` patterns no model of the catalogue matches (likely a typo)."""
    from ..foundation.catalog import PRICES

    known = list(PRICES)
    return [p for p in policy.allowed_models or []
            if not any(fnmatchcase(k, p) or fnmatchcase(p, k + "*") for k in known)]
