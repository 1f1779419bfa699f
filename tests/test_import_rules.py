"""The package's import graph has no circle, and its parts import only what they may.

Read from the source: every import statement counts, including those under
``if TYPE_CHECKING:`` and those inside functions, so a circle cannot hide behind
laziness. The rules (ARCHITECTURE.md): the turn loop (``agent/loop``) knows no
integration; an integration (``agent/integrations/<name>``) imports neither the loop, nor
``harness.py``, nor another integration; ``agent/`` never imports IPython, widgets or the
notebook layer; ``providers/`` never imports ``agent/``; ``conventions/`` (AGENTS.md, Agent
Skills) imports ``agent/`` but no UI, and ``agent/`` never imports it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "jupyter_brain"
ROOT = PACKAGE.name
INTEGRATIONS = f"{ROOT}.agent.integrations"
ENGINES = f"{ROOT}.engines"
ENGINES_MAY = ("engines", "agent", "providers", "foundation")
UI = ("IPython", "ipywidgets", "anywidget", "ipykernel", f"{ROOT}.widgets", f"{ROOT}.notebook", f"{ROOT}.magics")


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, package): p for p in sorted(package.rglob("*.py"))}


def imports_of(path: Path, modules: dict[str, Path], package_dir: Path = PACKAGE) -> Iterator[str]:
    """Every module ``path`` imports, absolute (``from pkg import sub`` names ``pkg.sub``)."""
    name = module_name(path, package_dir)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            subs = [f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in modules]
            if len(subs) < len(node.names):  # some names are attributes of the module itself
                yield target
            yield from subs


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Our modules and the modules of ours each imports."""
    modules = all_modules(package)
    return {name: {m for m in imports_of(path, modules, package) if m in modules and m != name}
            for name, path in modules.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # recursion is fine: the package is a few hundred modules
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


BELOW_NOTEBOOK = {f"{ROOT}.session", f"{ROOT}.compare"}
GOVERNANCE = f"{ROOT}.governance"


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def integration_of(name: str) -> str | None:
    if not _under(name, INTEGRATIONS) or name == INTEGRATIONS:
        return None
    return name[len(INTEGRATIONS) + 1:].split(".")[0]


def broken_rules(package: Path = PACKAGE) -> list[str]:
    modules = all_modules(package)
    bad: list[str] = []
    for name, path in modules.items():
        imported = set(imports_of(path, modules, package))
        mine = integration_of(name)
        for other in sorted(imported):
            theirs = integration_of(other)
            if mine is not None and (_under(other, f"{ROOT}.agent.loop") or _under(other, f"{ROOT}.agent.harness")):
                bad.append(f"integration {name} imports the loop or the harness: {other}")
            if mine is not None and theirs is not None and theirs != mine:
                bad.append(f"integration {name} imports another integration: {other}")
            if _under(name, f"{ROOT}.agent.loop") and _under(other, INTEGRATIONS):
                bad.append(f"the loop ({name}) imports an integration: {other}")
            if name == INTEGRATIONS and _under(other, INTEGRATIONS):
                bad.append(f"{name} imports {other}: each integration is registered on its own line")
            if _under(name, f"{ROOT}.agent") and any(_under(other, ui) for ui in UI):
                bad.append(f"{name} (agent) imports the UI: {other}")
            # The Jupyter server extension (the MCP endpoint for outside agents) runs in the server
            # process, where no kernel, IPython or widget exists: it uses agent/ and tools/ pieces only.
            if _under(name, f"{ROOT}.server") and any(_under(other, ui) for ui in UI):
                bad.append(f"{name} (server extension) imports the UI: {other}")
            if _under(name, f"{ROOT}.conventions") and any(_under(other, ui) for ui in UI):
                bad.append(f"{name} (conventions) imports the UI: {other}")
            if _under(name, f"{ROOT}.agent") and _under(other, f"{ROOT}.conventions"):
                bad.append(f"{name} (agent) imports the conventions: {other}")
            if _under(name, f"{ROOT}.providers") and _under(other, f"{ROOT}.agent"):
                bad.append(f"{name} (providers) imports the agent: {other}")
            # engines/ (outside agents over ACP, issue #36): the agent's events and results, no UI;
            # only the notebook layer (notebook/engine_cell.py) runs it.
            if _under(name, ENGINES) and (any(_under(other, ui) for ui in UI) or (
                    _under(other, ROOT) and not any(_under(other, f"{ROOT}.{ok}") for ok in ENGINES_MAY))):
                bad.append(f"{name} (engines) imports beyond agent/, providers/, foundation/: {other}")
            if _under(other, ENGINES) and not (_under(name, ENGINES) or _under(name, f"{ROOT}.notebook")):
                bad.append(f"{name} imports the engines (only the notebook layer runs them): {other}")
            # Settings take one route: the session and compare layers get what the notebook
            # registered (web search, tools) as arguments, never by reading its module state.
            # governance (issue #38) sits beside agent/: it uses the agent's contract and is
            # wired in by the notebook; nothing below the notebook reaches for it.
            if _under(name, GOVERNANCE) and (any(_under(other, ui) for ui in UI) or other in BELOW_NOTEBOOK
                                             or _under(other, f"{ROOT}.tools") or _under(other, f"{ROOT}.mcp")):
                bad.append(f"{name} (governance) imports the notebook layer: {other}")
            if _under(other, GOVERNANCE) and not _under(name, GOVERNANCE) and any(
                    _under(name, f"{ROOT}.{below}") for below in ("agent", "providers", "foundation", "mcp", "tools")):
                bad.append(f"{name} imports governance, which only the notebook layer wires in: {other}")
            if name in BELOW_NOTEBOOK and _under(other, f"{ROOT}.notebook"):
                bad.append(f"{name} reads the notebook layer's state: {other}")
    return bad


def test_no_import_circle_in_the_package() -> None:
    assert circles(graph()) == []


def test_every_import_follows_the_rules() -> None:
    assert broken_rules() == []


def test_the_checks_see_type_checking_and_lazy_imports(tmp_path: Path) -> None:
    """A circle closed only under TYPE_CHECKING, one closed inside a function, and each
    forbidden import are found (on a small package written here)."""
    pkg = tmp_path / ROOT
    files = {
        "__init__.py": "",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n",
        "b.py": "from .a import x\n",
        "c.py": "def f():\n    from . import d\n",
        "d.py": "from .c import f\n",
        "providers/__init__.py": "from ..agent import harness\n",
        "agent/__init__.py": "",
        "agent/harness.py": "",
        "agent/loop/__init__.py": "from ..integrations.memory import hook\n",
        "agent/integrations/__init__.py": "",
        "agent/integrations/memory/__init__.py": "",
        "agent/integrations/memory/hook.py": "from ...loop import x\nfrom ..web.hook import y\nimport IPython\n",
        "agent/integrations/web/__init__.py": "",
        "agent/integrations/web/hook.py": "",
        "server/__init__.py": "from ..notebook import x\n",
        "notebook/__init__.py": "",
        "conventions/__init__.py": "import IPython\n",
    }
    for rel, text in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text, encoding="utf-8")
    assert circles(graph(pkg)) == [
        [f"{ROOT}.a", f"{ROOT}.b"],
        [f"{ROOT}.agent.integrations.memory.hook", f"{ROOT}.agent.loop"],
        [f"{ROOT}.c", f"{ROOT}.d"],
    ]
    bad = broken_rules(pkg)
    assert any("imports the loop or the harness" in b for b in bad)
    assert any("imports another integration" in b for b in bad)
    assert any("the loop" in b and "imports an integration" in b for b in bad)
    assert any("(agent) imports the UI: IPython" in b for b in bad)
    assert any("(providers) imports the agent" in b for b in bad)
    assert any("(server extension) imports the UI" in b for b in bad)
    assert any("(conventions) imports the UI: IPython" in b for b in bad)


FIRST_WORD_PROBE = """
import importlib, json, sys
import anthropic
before = set(sys.modules)
from jupyter_brain.notebook import warm_up
for name in (*warm_up.MODULES, "jupyter_brain.magics", "jupyter_brain.providers.anthropic"):
    importlib.import_module(name)
from jupyter_brain.providers.sdk_support import transport_errors
transport_errors()
from jupyter_brain.agent.events import TurnEnd
from jupyter_brain.agent.results import TurnResult
lazy = ("yaml", "tiktoken", "httpx", "mcp", "opentelemetry", "pandas", "numpy", "jupyter_brain.widgets.text_view",
        "jupyter_brain.agent.context_pack")
print(json.dumps({"loaded": sorted(m for m in lazy if m in sys.modules and m not in before),
                  "events_built": TurnEnd.__pydantic_complete__, "result_built": TurnResult.__pydantic_complete__}))
"""


def test_a_first_turns_modules_leave_what_its_first_word_does_not_need_unloaded() -> None:
    """#40: a kernel's first ``%%agent`` turn imports these before its first word (the
    warm-up's ``MODULES``, the magics, the Anthropic provider); none of them may load Agent
    Skills' YAML parser, the tokenizer (the first request is counted after it is sent), an
    HTTP library the SDK does not use, the MCP SDK, OpenTelemetry, pandas, the plain-text view
    (the widget shows the first word) or the context pack's index (``--top-k`` turns only); and the event types and ``TurnResult`` build their
    validators on first use, not at import."""
    import json
    import os
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", FIRST_WORD_PROBE], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "JUPYTER_BRAIN_WARM_UP": "0"}, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"loaded": [], "events_built": False, "result_built": False}
