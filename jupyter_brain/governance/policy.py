"""The admin's policy file: what it may say, and how a bad one reads (where it is:
``location.py``). Checked by pydantic with unknown keys refused, so a typo
in a key is an error, not a silently ignored rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .location import PERMISSIONS, POLICY_ENV, POLICY_NAME, PolicyError, candidate_paths, find_policy

__all__ = ["PERMISSIONS", "POLICY_ENV", "POLICY_NAME", "Budgets", "DailyCaps", "Policy", "PolicyError", "candidate_paths",
           "find_policy", "read_policy"]



class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DailyCaps(_Strict):
    """What one user, or one team together, may spend in a UTC day (None: no cap)."""

    max_cost_per_day: float | None = Field(default=None, gt=0)
    max_tokens_per_day: int | None = Field(default=None, gt=0)

    @property
    def active(self) -> bool:
        return self.max_cost_per_day is not None or self.max_tokens_per_day is not None


class Budgets(_Strict):
    """``user``: the caps of every user (or by user name); ``team``: of every team (or by name)."""

    user: DailyCaps | dict[str, DailyCaps] | None = None
    team: DailyCaps | dict[str, DailyCaps] | None = None

    def for_user(self, user: str) -> DailyCaps | None:
        return _pick(self.user, user)

    def for_team(self, team: str) -> DailyCaps | None:
        return _pick(self.team, team)


def _pick(caps: DailyCaps | dict[str, DailyCaps] | None, name: str) -> DailyCaps | None:
    if isinstance(caps, dict):
        caps = caps.get(name, caps.get("*"))
    return caps if caps is not None and caps.active else None


class Policy(_Strict):
    """What the admin allows. A key left out allows what jupyter-brain allows by itself."""

    enabled: bool = True
    max_permission: Literal["read-only", "ask", "auto"] = "auto"
    allowed_providers: list[str] | None = None
    allowed_models: list[str] | None = None  # glob patterns (fnmatch)
    send_outputs: bool = True
    web: bool = True
    mcp_servers: list[str] | None = None
    outside_agents: bool = True
    budgets: Budgets = Budgets()
    teams: dict[str, list[str]] = Field(default_factory=dict)
    ledger: str | None = None  # a database URL: sqlite:///path or postgresql://...

    @field_validator("allowed_providers")
    @classmethod
    def _lower(cls, names: list[str] | None) -> list[str] | None:
        return None if names is None else [n.strip().lower() for n in names]

    @field_validator("ledger")
    @classmethod
    def _known_scheme(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(("sqlite:///", "postgresql://", "postgres://")):
            raise ValueError("must start with sqlite:/// or postgresql://")
        return url

    def teams_of(self, user: str) -> list[str]:
        return sorted(team for team, members in self.teams.items() if user in members)

    @property
    def has_budgets(self) -> bool:
        return self.budgets.user is not None or self.budgets.team is not None


def read_policy(path: Path) -> Policy:
    """The file as a ``Policy``; any problem is one ``PolicyError`` line naming it."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError(f"policy {path} cannot be read: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise PolicyError(f"policy {path} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(document, dict):
        raise PolicyError(f"policy {path} must be a JSON object, not {type(document).__name__}")
    try:
        return Policy.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top)"
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise PolicyError(f"policy {path}: {where}: {first['msg']}{more}") from None
