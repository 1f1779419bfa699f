"""The admin's policy over the endpoint (issue #38; ``jupyter_brain/governance``), read when the
extension loads: ``outside_agents: false`` closes it (every tool refused, reading too, naming
the policy), a policy that cannot be read closes it too (never unpoliced), and
``max_permission`` caps ``JupyterBrainMCP.permission`` (a server may be stricter, never looser).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class EndpointPolicy:
    permission: str  # the mode in force: the server's, or the policy's when that is stricter
    closed: str | None = None  # why every call is refused, when it is


def endpoint_policy(permission: str, environ: Mapping[str, str] | None = None) -> EndpointPolicy:
    from ..governance import Governance

    governance = Governance.load(environ)
    if governance.error is not None:
        return EndpointPolicy(permission, f"{governance.error}; outside agents are refused until it is fixed "
                                          "(ask your admin)")
    rules = governance.rules
    if rules is None:
        return EndpointPolicy(permission)
    if not rules.policy.outside_agents:
        return EndpointPolicy(permission, f"outside agents are not allowed by the policy {rules.source} "
                                          "(outside_agents: false)")
    allowed, _ = rules.permission(permission, explicit=False)
    return EndpointPolicy(allowed)
