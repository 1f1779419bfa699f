"""The admin's policy in a kernel (issue #38; ``jupyter_brain/governance``): read when the
extension loads, applied before each turn (refusals as one ``UsageError`` line, the
permission mode clamped), its hook added to every turn, MCP servers outside its list left
unconnected, and ``send_outputs: false`` handed to the tools that show values."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..settings import SETTINGS

if TYPE_CHECKING:
    from ..governance import Governance


def load_governance(magics: Any) -> Governance:
    """Read the policy now (at ``%load_ext``); its problem or warnings as one line each."""
    from ..governance import Governance

    governance = Governance.load(data_dir=str(magics.data_dir))
    magics.governance = governance
    if governance.error is not None:
        print(f"jupyter-brain: {governance.error}; the agent refuses to run until it is fixed.")
    for warning in governance.warnings:
        print(f"jupyter-brain: {warning}")
    # Applied with a policy; reset by a reload without one (only if those modules are loaded).
    if governance.rules is not None or "jupyter_brain.mcp.manager" in sys.modules:
        from ..mcp.manager import set_kernel_admission

        set_kernel_admission(governance.admits_server if governance.rules is not None else None)
    if governance.rules is not None or "jupyter_brain.tools.values_policy" in sys.modules:
        from ..tools import values_policy

        values_policy.set_send_outputs(governance.send_outputs)
    return governance


def kernel_governance(magics: Any) -> Governance:
    governance = getattr(magics, "governance", None)
    return governance if governance is not None else load_governance(magics)


def govern_turn(magics: Any, options: Any, args: Any, prog: str = "%%agent") -> Any:
    """The turn's options under the policy, or a ``UsageError`` naming it (nothing called yet)."""
    governance = kernel_governance(magics)
    if not governance.active:
        return options
    from ..governance import PolicyRefusal

    explicit = getattr(args, "permission", None) is not None or options.permission != SETTINGS["permission"].default
    try:
        permit = governance.check_turn(permission=options.permission, permission_explicit=explicit,
                                       provider=options.provider, model=options.model, web=options.web)
        engine = getattr(options, "engine", "builtin")
        if engine != "builtin" and governance.rules is not None:  # an outside agent over ACP (#36)
            governance.rules.check_outside_agents(f"--engine {engine} (outside_agents: false)")
    except PolicyRefusal as refusal:
        raise UsageError(f"{prog}: {refusal}") from None
    for note in permit.notes:
        print(note)
    if permit.permission != options.permission:
        options = options.model_copy(update={"permission": permit.permission})
    return options


def governed_provider(magics: Any, provider: Any, prog: str = "%%agent") -> Any:
    """The built provider if the policy allows its name and model, else a ``UsageError``."""
    governance = kernel_governance(magics)
    if governance.rules is None:
        return provider
    from ..governance import PolicyRefusal

    try:
        governance.check_provider(provider)
    except PolicyRefusal as refusal:
        raise UsageError(f"{prog}: {refusal}") from None
    return provider


def governed_factory(magics: Any, factory: Any, prog: str = "%%compare") -> Any:
    """A ``(strategy, run) -> provider`` factory whose providers the policy checks as built."""
    if kernel_governance(magics).rules is None:
        return factory
    return lambda strategy, run: governed_provider(magics, factory(strategy, run), prog)


def governance_hooks(magics: Any) -> list[Any]:
    """The policy's hook for a turn (none without a policy)."""
    integration = kernel_governance(magics).integration()
    return [] if integration is None else [integration]
