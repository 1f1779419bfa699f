"""``%agent fix [N] [--apply]``: see ``jupyter_brain.notebook.fix``."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ..agent_cell import run_agent_cell
from ..fix import ProposedFix, apply_fix, fix_prompt, pick_error, proposed_code


def cmd_fix(magics: Any, rest: list[str]) -> None:
    unknown = [w for w in rest if not w.isdigit() and w != "--apply"]
    if unknown:
        raise UsageError(f"%agent fix [N] [--apply]: unknown argument {unknown[0]!r} "
                         "(N: the number of the failing cell, default the last one)")
    if "--apply" in rest:
        apply_fix(magics.shell, getattr(magics, "last_fix", None))
        return
    error = pick_error(magics.cell_errors, rest)
    _outputs_allowed(magics)
    user_ns = magics.shell.user_ns if magics.shell is not None else {}
    run_agent_cell(magics, "", fix_prompt(error, user_ns), interpolate_prompt=False)
    result = user_ns.get("_agent")
    code = proposed_code(getattr(result, "text", "") or "")
    if code is None:
        print("The agent did not propose a corrected cell (no ```python block in its answer).")
        return
    fix = ProposedFix(error.execution_count, error.source, code)
    magics.last_fix = fix
    diff = fix.diff()
    if not diff:
        print(f"The proposed cell is the same as In [{error.execution_count}].")
        return
    print(f"Proposed fix of In [{error.execution_count}] ({error.error_type}):\n")
    print(diff)
    print("%agent fix --apply puts it in a new cell below; to discard it, do nothing.")


def _outputs_allowed(magics: Any) -> None:
    """A fix sends the failing cell's traceback and the values it touches: not under an admin's
    ``send_outputs: false`` (issue #38), refused before anything is sent."""
    from ..governance import kernel_governance

    governance = kernel_governance(magics)
    if governance.rules is not None and not governance.send_outputs:
        raise UsageError(f"%agent fix: not allowed by the policy {governance.rules.source} (send_outputs: false): "
                         "it would send the failing cell's traceback and the values it touches to the model")
