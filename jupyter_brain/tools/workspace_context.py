"""The notebook's workspace sections: variables, the working directory, recent cells.

Each render reads the live state (so the model sees variables a tool just created) and
prints it the same way every time the state is the same, so it stays cacheable.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..agent.workspace import Workspace, WorkspaceSection
from .files import human_size
from .variables import _is_callable_definition, _type_name, summarize, user_variable_names

MAX_ENTRIES_SCANNED = 2_000
MAX_ENTRIES_SHOWN = 40
CELL_LINES = 12
VOLATILE_SUFFIXES = (".ipynb",)
AGENT_CELL_MARKERS = ("run_cell_magic('agent'", "run_cell_magic('compare'", "run_line_magic('agent'",
                      "%%agent", "%%compare", "%agent")


def variables_section(namespace: dict[str, Any]) -> str:
    names = user_variable_names(namespace)
    lines: list[str] = []
    callables = 0
    for name in names:
        value = namespace.get(name)
        if _is_callable_definition(value):
            callables += 1
            continue
        lines.append(f"- {name}: {_type_name(value)} — {summarize(value)}")
    if callables:
        lines.append(f"- ({callables} functions/classes not listed; list_variables(include_callables=true) shows them)")
    return "\n".join(lines) if lines else "(no user variables yet)"


def directory_section(root: str | os.PathLike[str], *, hide: tuple[str, ...] = (".jupyter_brain",)) -> str:
    base = Path(root)
    entries: list[os.DirEntry[str]] = []
    truncated = False
    try:
        with os.scandir(base) as it:
            for entry in it:
                if entry.name.startswith(".") or entry.name in hide or entry.name == "__pycache__":
                    continue
                entries.append(entry)
                if len(entries) >= MAX_ENTRIES_SCANNED:
                    truncated = True
                    break
    except OSError as exc:
        return f"{base.name or base}: cannot list ({exc.strerror or exc})"
    dirs = sorted((e for e in entries if _is_dir(e)), key=lambda e: e.name.lower())
    files = sorted((e for e in entries if not _is_dir(e)), key=lambda e: e.name.lower())
    lines = [f"{base.name or str(base)}/ — {_plural(len(files), 'file')}, {_plural(len(dirs), 'folder')}"
             + (" (more not scanned)" if truncated else "")]
    for entry in [*dirs, *files][:MAX_ENTRIES_SHOWN]:
        if _is_dir(entry):
            lines.append(f"  {entry.name}/")
        elif entry.name.endswith(VOLATILE_SUFFIXES):
            # Autosave changes a notebook's size every few minutes: listing it would
            # change the workspace text (and lose the prompt cache) for nothing.
            lines.append(f"  {entry.name}")
        else:
            try:
                size = human_size(entry.stat().st_size)
            except OSError:
                size = "?"
            lines.append(f"  {entry.name}  {size}")
    hidden = len(dirs) + len(files) - MAX_ENTRIES_SHOWN
    if hidden > 0:
        lines.append(f"  … {hidden} more (list_files shows them)")
    return "\n".join(lines)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def recent_cells_section(namespace: dict[str, Any], count: int = 3) -> str:
    """The last few cells the user ran (not agent cells: their prompt is the request)."""
    history = namespace.get("In")
    if not isinstance(history, list):
        return ""
    shown: list[str] = []
    for number in range(len(history) - 1, 0, -1):
        source = history[number]
        if not isinstance(source, str) or not source.strip():
            continue
        if any(marker in source for marker in AGENT_CELL_MARKERS):
            continue
        lines = source.strip().splitlines()
        body = lines[:CELL_LINES] + ([f"# … {len(lines) - CELL_LINES} more lines"] if len(lines) > CELL_LINES else [])
        shown.append(f"In [{number}]:\n" + "\n".join(f"    {line}" for line in body))
        if len(shown) >= count:
            break
    return "\n".join(reversed(shown))


def notebook_workspace(
    namespace: dict[str, Any],
    root: str | os.PathLike[str],
    *,
    budget_tokens: int = 2_000,
    count: Callable[[str], int] | None = None,
    recent_cells: int = 3,
) -> Workspace:
    """The workspace ``%%agent`` sends with each request."""
    workspace = Workspace(
        [
            WorkspaceSection("Variables", lambda: variables_section(namespace), weight=3),
            WorkspaceSection("Working directory", lambda: directory_section(root), weight=1),
            WorkspaceSection("Recent cells", lambda: recent_cells_section(namespace, recent_cells), weight=1),
        ],
        budget_tokens=budget_tokens,
    )
    if count is not None:
        workspace.count = count
    return workspace
