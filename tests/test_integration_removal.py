"""Each integration can be removed: delete its folder and its registration line, and the
rest of the package still imports and runs a turn.

For each folder of ``agent/integrations/``, the package is copied to a temporary folder,
the integration's folder is deleted with the lines of ``agent/harness.py`` that name what
it exports (its import and its registration), and a fresh interpreter imports the package
(the extension, the session, the harness) and runs a scripted turn that would use every
integration: tools, memory, decisions and the learner, checkpoints, the thinking phase,
web search, a context pack, runtime metadata, a skill, citations and a budget cap.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "jupyter_brain"
INTEGRATIONS = PACKAGE / "agent" / "integrations"
NAMES = sorted(p.name for p in INTEGRATIONS.iterdir() if (p / "hook.py").is_file())

TURN = textwrap.dedent("""
    import sys, tempfile
    from pathlib import Path
    import jupyter_brain, jupyter_brain.magics, jupyter_brain.session  # the rest imports
    from jupyter_brain.agent.checkpoints import CheckpointStore
    from jupyter_brain.agent.cost_caps import BudgetCaps
    from jupyter_brain.agent.decisions import SQLiteDecisionStore, ToolUsageLearner
    from jupyter_brain.agent.events import EventLog
    from jupyter_brain.agent.harness import AgentHarness
    from jupyter_brain.agent.memory import SQLiteMemory
    from jupyter_brain.agent.tools import AgentToolRegistry, tool
    from jupyter_brain.providers.scripted import ScriptedProvider

    assert jupyter_brain.__file__.startswith(sys.argv[1]), jupyter_brain.__file__

    @tool
    def lookup(key: str) -> str:
        '''Look a key up.'''
        return f"value of {key}"

    folder = Path(tempfile.mkdtemp())
    (folder / "notes.md").write_text("The premium plan costs 10 dollars.", encoding="utf-8")
    log = EventLog(folder / "events.sqlite")
    memory = SQLiteMemory(folder)
    bot = ScriptedProvider([{"text": "", "tool_calls": [{"name": "lookup", "arguments": {"key": "plan"}}]},
                            "The premium plan costs 10 dollars (notes.md).", "- a fact"])
    harness = AgentHarness(
        bot, AgentToolRegistry([lookup]), log, working_directory=str(folder),
        memory_retriever=memory, memory_extractor=None, decision_store=SQLiteDecisionStore(log),
        autonomous_research_learner=ToolUsageLearner(), checkpoint_store=CheckpointStore(folder / "checkpoints"),
        thinking_phase=True, thinking_strategy="token_budget", web_search=lambda q: [],
    )
    result = harness.run_turn("s", [], "How much is the premium plan?", top_k=2, web_mode="on",
                              show_citations=True, runtime_provider="scripted", runtime_model="m",
                              skill_context="Answer briefly.", budget=BudgetCaps(max_tokens_total=10**7))
    assert result.status == "completed", (result.status, result.error)
    print(result.status, len(result.tool_calls))
""")


def remove(copy: Path, name: str) -> list[str]:
    """Delete ``name``'s folder and the harness lines naming its exports; returns those lines."""
    folder = copy / "agent" / "integrations" / name
    exports = _exports(folder / "__init__.py")
    shutil.rmtree(folder)
    harness = copy / "agent" / "harness.py"
    lines = harness.read_text(encoding="utf-8").splitlines(keepends=True)
    removed = [line for line in lines if any(e in line for e in exports)]
    harness.write_text("".join(line for line in lines if line not in removed), encoding="utf-8")
    return removed


def _exports(init: Path) -> list[str]:
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return [ast.literal_eval(e) for e in node.value.elts]  # type: ignore[attr-defined]
    raise AssertionError(f"{init} has no __all__")


def test_there_are_thirteen_integrations() -> None:
    assert NAMES == ["budget", "checkpoints", "citations", "context_pack", "decisions", "memory", "recording", "request_log",
                     "runtime", "server_tools",
                     "thinking_phase", "tracing", "web"]


@pytest.mark.parametrize("name", NAMES)
def test_the_package_runs_a_turn_without_the_integration(name: str, tmp_path: Path) -> None:
    copy = tmp_path / "jupyter_brain"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "static", "labextension"))
    removed = remove(copy, name)
    # Its import, and one registration line per export.
    imports = [line for line in removed if line.startswith("from .integrations.")]
    registrations = [line for line in removed if line not in imports]
    assert len(imports) == 1 and len(registrations) == len(_exports(INTEGRATIONS / name / "__init__.py")), removed
    assert all(line.rstrip().endswith(",") for line in registrations), removed
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", TURN, str(copy)], capture_output=True, text=True, timeout=180,
                         env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["completed", "1"]
