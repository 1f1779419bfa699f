"""``%agent fix [N] [--apply]``: fix a failing cell with the agent, from any front-end.

The agent gets the failing cell's source, the traceback and a short description of the
variables the cell touches, and answers with the corrected cell in a ```python block.
The fix is shown as a diff of that cell; ``--apply`` puts the proposed cell into a new
cell below (IPython's ``set_next_input``, so it works without the JupyterLab extension).
Discarding is doing nothing.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

from ..tools.variables.summary import summarize
from .cell_errors import CellError

MAX_VARIABLES = 12
_FENCE = re.compile(r"```(?:python|py|ipython)?[ \t]*\n(.*?)```", re.DOTALL)

FIX_INSTRUCTIONS = (
    "Fix the error in this notebook cell. Look at the variables if you need to. Answer with one "
    "sentence on the cause, then the whole corrected cell in a single ```python block (the block "
    "replaces the cell as it is; keep the user's intent and style, change only what the fix needs)."
)


@dataclass(frozen=True)
class ProposedFix:
    execution_count: int
    original: str
    fixed: str

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            self.original.splitlines(keepends=True) if self.original.endswith("\n") else
            (self.original + "\n").splitlines(keepends=True),
            self.fixed.splitlines(keepends=True),
            fromfile=f"In [{self.execution_count}] (failing)", tofile="proposed fix",
        ))


def touched_variables(source: str, user_ns: dict[str, Any]) -> list[str]:
    """Names the cell reads or writes that exist in the namespace, in order of appearance."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        names = re.findall(r"[A-Za-z_]\w*", source)
    else:
        names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    seen: list[str] = []
    for name in names:
        if name in user_ns and not name.startswith("_") and name not in seen and not callable(user_ns[name]):
            seen.append(name)
    return seen[:MAX_VARIABLES]


def fix_prompt(error: CellError, user_ns: dict[str, Any]) -> str:
    variables = "\n".join(f"- {name} ({type(user_ns[name]).__name__}): {summarize(user_ns[name])}"
                          for name in touched_variables(error.source, user_ns))
    parts = [
        FIX_INSTRUCTIONS,
        f"The cell (In [{error.execution_count}]):\n```python\n{error.source.rstrip()}\n```",
        f"Its error:\n```\n{error.traceback.rstrip()}\n```",
    ]
    if variables:
        parts.append(f"Variables the cell touches:\n{variables}")
    return "\n\n".join(parts)


def proposed_code(answer: str) -> str | None:
    """The last fenced Python block of the answer (the corrected cell), if any."""
    blocks = [b.strip("\n") for b in _FENCE.findall(answer or "") if b.strip()]
    return blocks[-1] + "\n" if blocks else None


def pick_error(errors: Any, rest: list[str]) -> CellError:
    numbers = [w for w in rest if w.isdigit()]
    if numbers:
        error = errors.of_cell(int(numbers[0]))
        if error is None:
            known = ", ".join(map(str, errors.cells())) or "none yet"
            raise UsageError(f"%agent fix: In [{numbers[0]}] has no recorded error (failing cells: {known})")
        return error
    error = errors.latest()
    if error is None:
        raise UsageError("%agent fix: no cell has failed in this kernel since jupyter_brain was loaded")
    return error


def apply_fix(shell: Any, fix: ProposedFix | None) -> None:
    if fix is None:
        raise UsageError("%agent fix --apply: no proposed fix yet; run %agent fix first")
    if shell is not None:
        shell.set_next_input(fix.fixed, replace=False)
    print(f"The proposed fix of In [{fix.execution_count}] is in a new cell below: run it to check.")
