"""The layers of ARCHITECTURE.md hold: imports only go down.

foundation/ imports nothing of ours; providers/ nothing of agent/; agent/ and mcp/ no
IPython, widgets or notebook layer. Checked on the source (every import statement,
including the lazy ones inside functions), so a violation cannot hide behind laziness.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "jupyter_brain"

UI = ("IPython", "ipywidgets", "anywidget", "ipykernel", "traitlets",
      "jupyter_brain.widgets", "jupyter_brain.notebook", "jupyter_brain.magics")
FORBIDDEN = {
    "foundation": ("jupyter_brain.",) + UI,
    "providers": ("jupyter_brain.agent", "jupyter_brain.mcp", "jupyter_brain.session", "jupyter_brain.tools") + UI,
    "agent": ("jupyter_brain.mcp", "jupyter_brain.session", "jupyter_brain.compare") + UI,
    "mcp": UI,
}


def imported_modules(path: Path) -> list[str]:
    """Absolute names of every module a file imports (relative imports resolved)."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.append(module)
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_imports_only_go_down(layer: str) -> None:
    bad = []
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for name in imported_modules(path):
            if any(name == f.rstrip(".") or name.startswith(f if f.endswith(".") else f + ".") or name == f
                   for f in FORBIDDEN[layer]):
                bad.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert bad == []


def test_the_check_sees_relative_imports() -> None:
    names = imported_modules(PACKAGE / "agent" / "harness.py")
    assert "jupyter_brain.providers.base" in names and "jupyter_brain.agent.loop" in names
