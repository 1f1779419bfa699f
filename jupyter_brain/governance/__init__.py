"""Governance for teams (issue #38): the admin's policy and the shared spending ledger.

One entry point, ``Governance``: ``Governance.load()`` reads the policy once (when the
extension loads); the notebook asks it, before a turn, what the turn may do
(``check_turn``: refusals as one ``PolicyRefusal`` line, the permission mode clamped), gives
each turn its ``integration()`` (the provider checked and the daily caps reserved in the
ledger before every model call), and shows ``describe()`` (``%agent policy``) and
``team_report()`` (``%agent cost --team``). No policy file: ``Governance.active`` is False
and nothing is checked. A bad policy: ``Governance.error`` is its one line, and every turn
is refused. This package imports no IPython; it is enforcement in the kernel, not a sandbox.

The names load on first use: a kernel without a policy never imports pydantic for it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "Governance": "governance", "TurnPermit": "governance", "current_user": "governance",
    "CapReached": "ledger", "Ledger": "ledger", "Scope": "ledger", "Spending": "ledger",
    "LedgerUnavailable": "ledger_sql",
    "POLICY_ENV": "location", "POLICY_NAME": "location", "PolicyError": "location", "find_policy": "location",
    "DailyCaps": "policy", "Policy": "policy", "read_policy": "policy",
    "PolicyRefusal": "rules", "Rules": "rules",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
