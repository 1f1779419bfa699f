"""``Governance``: a kernel's policy, its user and teams, and its ledger, behind one object."""

from __future__ import annotations

import getpass
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .ledger import Ledger, Scope, resets_at, today
from .location import PolicyError, find_policy
from .rules import PolicyRefusal, Rules, provider_identity, unknown_model_patterns
from .wording import amount, until

if TYPE_CHECKING:
    from .policy import Policy


def current_user(environ: Mapping[str, str] | None = None) -> str:
    """``JUPYTERHUB_USER``, else the OS user."""
    env = os.environ if environ is None else environ
    if env.get("JUPYTERHUB_USER"):
        return env["JUPYTERHUB_USER"]
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid()) if hasattr(os, "getuid") else "unknown"


def default_ledger_url(data_dir: str | os.PathLike[str] = ".jupyter_brain") -> str:
    return f"sqlite:///{Path(data_dir).expanduser().resolve() / 'ledger.sqlite'}"


@dataclass(frozen=True)
class TurnPermit:
    """What a turn may do: its permission mode, and the lines to show the user first."""

    permission: str
    notes: tuple[str, ...] = ()


@dataclass
class Governance:
    """The policy in force (``rules``), or why none could be read (``error``)."""

    rules: Rules | None = None
    error: str | None = None
    user: str = field(default_factory=current_user)
    data_dir: str = ".jupyter_brain"
    warnings: tuple[str, ...] = ()
    _ledger: Ledger | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, *, data_dir: str = ".jupyter_brain") -> Governance:
        """Read the policy now (never raises: a bad policy becomes ``error``)."""
        env = dict(os.environ if environ is None else environ)
        user = current_user(env)
        try:
            path = find_policy(env)
            if path is None:
                return cls(user=user, data_dir=data_dir)
            from .policy import read_policy  # pydantic: only where there is a policy

            policy = read_policy(path)
        except PolicyError as exc:
            return cls(error=str(exc), user=user, data_dir=data_dir)
        unknown = unknown_model_patterns(policy)
        warnings = tuple(f"policy {path}: allowed_models '{p}' matches no model jupyter-brain knows "
                         "(only a model of that name can be used)" for p in unknown)
        return cls(rules=Rules(policy, path), user=user, data_dir=data_dir, warnings=warnings)

    @property
    def active(self) -> bool:
        return self.rules is not None or self.error is not None

    @property
    def policy(self) -> Policy | None:
        return self.rules.policy if self.rules is not None else None

    # before a turn -------------------------------------------------------------------
    def check_turn(self, *, permission: str, permission_explicit: bool, provider: str | None = None,
                   model: str | None = None, web: str = "off") -> TurnPermit:
        """Refuse (``PolicyRefusal``) what the policy forbids; clamp the permission mode."""
        if self.error is not None:
            raise PolicyRefusal(f"{self.error}; the agent does not run without a valid policy (ask your admin)")
        if self.rules is None:
            return TurnPermit(permission)
        rules = self.rules
        rules.check_enabled()
        if provider:
            from ..providers.registry import PROVIDER_NAMES  # a registered name; a variable is checked once built

            names = [p.strip() for p in provider.split(",") if p.strip()]
            if all(n.lower() in PROVIDER_NAMES for n in names):
                rules.check_provider([n for n in names if n.lower() != "auto"])
        if model:
            rules.check_model([model])
        rules.check_web(web)
        allowed, note = rules.permission(permission, explicit=permission_explicit)
        return TurnPermit(allowed, (note,) if note else ())

    def check_provider(self, provider: Any) -> None:
        """The built provider (every member of a chain): its name and model allowed?"""
        if self.rules is None:
            return
        names, models = provider_identity(provider)
        self.rules.check_provider(names)
        self.rules.check_model(models)

    def admits_server(self, name: str) -> str | None:
        return self.rules.admits_server(name) if self.rules is not None else None

    @property
    def send_outputs(self) -> bool:
        return self.rules is None or self.rules.policy.send_outputs

    # the ledger ----------------------------------------------------------------------
    def scopes(self) -> list[Scope]:
        """The user's capped scopes: the user, and each team they belong to."""
        policy = self.policy
        if policy is None:
            return []
        scopes: list[Scope] = []
        caps = policy.budgets.for_user(self.user)
        if caps is not None:
            scopes.append(Scope("user", self.user, (self.user,), caps))
        for team in policy.teams_of(self.user):
            caps = policy.budgets.for_team(team)
            if caps is not None:
                scopes.append(Scope("team", team, tuple(sorted(set(policy.teams[team]))), caps))
        return scopes

    @property
    def ledger_url(self) -> str:
        policy = self.policy
        return policy.ledger if policy is not None and policy.ledger else default_ledger_url(self.data_dir)

    def ledger(self) -> Ledger:
        """The kernel's ledger connection, opened on first use."""
        with self._lock:
            if self._ledger is None:
                self._ledger = Ledger(self.ledger_url)
            return self._ledger

    def integration(self, counter: Any = None) -> Any:
        """The turn's hook (None without a policy)."""
        if self.rules is None:
            return None
        from ..foundation.tokens import TokenCounter
        from .hook import GovernanceIntegration

        scopes = self.scopes()
        return GovernanceIntegration(self.rules, self.user, scopes, self.ledger if scopes else None,
                                     counter or TokenCounter())

    def close(self) -> None:
        with self._lock:
            if self._ledger is not None:
                self._ledger.close()
                self._ledger = None

    # what the user sees --------------------------------------------------------------
    def describe(self) -> str:
        """``%agent policy``: the policy in force and its file, or that there is none."""
        if self.error is not None:
            return f"{self.error}\nThe agent refuses to run until the policy is fixed (ask your admin)."
        if self.rules is None:
            return ("No policy: jupyter-brain looks for $JUPYTER_BRAIN_POLICY, else jupyter_brain_policy.json "
                    "in Jupyter's config path (jupyter --paths).")
        p, source = self.rules.policy, self.rules.source
        def listed(values: list[str] | None) -> str:
            return "any" if values is None else (", ".join(values) or "none")
        lines = [f"Policy {source} (user {self.user}; teams: {', '.join(p.teams_of(self.user)) or 'none'})",
                 f"  enabled: {str(p.enabled).lower()}",
                 f"  max_permission: {p.max_permission}",
                 f"  allowed_providers: {listed(p.allowed_providers)}",
                 f"  allowed_models: {listed(p.allowed_models)}",
                 f"  send_outputs: {str(p.send_outputs).lower()}"
                 + ("" if p.send_outputs else " (only names, types and shapes reach the model)"),
                 f"  web: {str(p.web).lower()}",
                 f"  mcp_servers: {listed(p.mcp_servers)}",
                 f"  outside_agents: {str(p.outside_agents).lower()}"]
        for scope in self.scopes():
            caps = scope.caps
            limits = [f"{amount(caps.max_cost_per_day, 'usd')} a day" if caps.max_cost_per_day else "",
                      f"{amount(caps.max_tokens_per_day, 'tokens')} a day" if caps.max_tokens_per_day else ""]
            lines.append(f"  budget ({scope.kind} {scope.name}): {', '.join(x for x in limits if x)}")
        if self.scopes():
            from .ledger_sql import _safe_url

            lines.append(f"  ledger: {_safe_url(self.ledger_url)}")
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)

    def team_report(self) -> str:
        """``%agent cost --team``: each of the user's teams' spending today against its caps."""
        from .ledger_sql import LedgerUnavailable

        if self.error is not None:
            return self.error
        policy = self.policy
        if policy is None:
            return "No policy, so no team budgets (see %agent policy)."
        teams = policy.teams_of(self.user)
        if not teams:
            return f"User {self.user} is in no team of the policy {self.rules.source if self.rules else ''}."
        day = today()
        reset = resets_at(day)
        lines = [f"Today ({day} UTC; caps reset in {until(reset)}), ledger {_ledger_label(self.ledger_url)}:"]
        try:
            for team in teams:
                members = sorted(set(policy.teams[team]))
                spending = self.ledger().spending(members, day)
                cost = sum(s.cost_usd for s in spending.values())
                tokens = sum(s.tokens for s in spending.values())
                caps = policy.budgets.for_team(team)
                cap_cost = f" of {amount(caps.max_cost_per_day, 'usd')}" if caps and caps.max_cost_per_day else ""
                cap_tokens = (f" of {amount(caps.max_tokens_per_day, 'tokens')}"
                              if caps and caps.max_tokens_per_day else " tokens")
                lines.append(f"team {team}: {amount(cost, 'usd')}{cap_cost}, {tokens:,}{cap_tokens}")
                for member, spent in spending.items():
                    lines.append(f"  {member}{' (you)' if member == self.user else ''}: "
                                 f"{amount(spent.cost_usd, 'usd')}, {spent.tokens:,} tokens")
        except LedgerUnavailable as exc:
            lines.append(str(exc))
        return "\n".join(lines)


def _ledger_label(url: str) -> str:
    from .ledger_sql import _safe_url

    return _safe_url(url)
