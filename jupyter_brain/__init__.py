"""jupyter-brain: an LLM agent that lives in the Jupyter kernel.

``%load_ext jupyter_brain`` registers ``%%agent`` and ``%agent``. Public names are
imported lazily so that loading the extension stays fast and the model SDKs are only
imported when a provider that needs them is built.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .foundation.version import __version__ as __version__

_PUBLIC = {
    "AgentHarness": "jupyter_brain.agent.harness",
    "TurnResult": "jupyter_brain.agent.harness",
    "ThinkLevel": "jupyter_brain.agent.thinking",
    "ThinkingConfig": "jupyter_brain.agent.thinking",
    "ThinkingManager": "jupyter_brain.agent.thinking",
    "ReflectionEngine": "jupyter_brain.agent.reflection",
    "ReflectionResult": "jupyter_brain.agent.reflection",
    "TurnBudget": "jupyter_brain.agent.budget",
    "StrategyPreset": "jupyter_brain.agent.strategies",
    "ReasoningStrategy": "jupyter_brain.agent.strategies",
    "AgentToolRegistry": "jupyter_brain.agent.tools",
    "PermissionMode": "jupyter_brain.agent.tools",
    "ToolError": "jupyter_brain.agent.tools",
    "EventLog": "jupyter_brain.agent.events",
    "AgentCallbacks": "jupyter_brain.agent.callbacks",
    "SessionCostTracker": "jupyter_brain.agent.cost",
    "ScriptedProvider": "jupyter_brain.providers.scripted",
    "ProviderResult": "jupyter_brain.providers.base",
    "LLMProvider": "jupyter_brain.providers.base",
    "get_provider": "jupyter_brain.providers.registry",
    "ChainProvider": "jupyter_brain.providers.chain",
    "SessionManager": "jupyter_brain.session",
    "TokenCounter": "jupyter_brain.agent.context",
    "ContextWarningTracker": "jupyter_brain.agent.context",
    "SlidingWindowSummary": "jupyter_brain.agent.context",
    "TokenBudget": "jupyter_brain.agent.context",
    "SemanticRelevance": "jupyter_brain.agent.context",
    "Workspace": "jupyter_brain.agent.workspace",
    "CheckpointStore": "jupyter_brain.agent.checkpoints",
    "WorkspaceIndex": "jupyter_brain.agent.context_pack",
    "WebResult": "jupyter_brain.agent.web",  # what a web search function returns (web_search=...)  # run_turn(top_k=...): the folder's BM25 index
    "use_tracer_provider": "jupyter_brain.agent.tracing",
    "Memory": "jupyter_brain.agent.memory",
    "MemoryRetriever": "jupyter_brain.agent.memory",
    "MemoryExtractor": "jupyter_brain.agent.memory",
    "SQLiteMemory": "jupyter_brain.agent.memory",
    "RuntimeDecisionRecord": "jupyter_brain.agent.decisions",
    "RuntimeDecisionStore": "jupyter_brain.agent.decisions",
    "SQLiteDecisionStore": "jupyter_brain.agent.decisions",
    "AutonomousResearchLearner": "jupyter_brain.agent.decisions",
    "ToolUsageLearner": "jupyter_brain.agent.decisions",
    "decisions": "jupyter_brain.notebook.subcommands.decisions",  # the kernel's records (.to_dataframe())
}

__all__ = [*_PUBLIC, "tool", "web_search", "load_ipython_extension", "unload_ipython_extension"]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'jupyter_brain' has no attribute {name!r}")
    return getattr(import_module(module), name)


def tool(fn: Any = None, **options: Any) -> Any:
    """Make a typed function a tool of every ``%%agent`` session in this kernel.

    Same options as ``jupyter_brain.agent.tools.tool`` (``effect="write"`` or
    ``"execute"`` puts it under the permission mode). Returns the ``ToolSpec``, which is
    still callable like the function.
    """
    from .agent.tools import tool as make_tool
    from .notebook.user_tools import USER_TOOLS

    def register(func: Any) -> Any:
        spec = make_tool(func, **options)
        USER_TOOLS[spec.name] = spec
        return spec

    return register(fn) if fn is not None else register


def web_search(fn: Any) -> Any:
    """Make ``fn(query) -> results`` the web search of ``%%agent --web on`` in this kernel
    (used when the provider has no search of its own). Each result is a dict (or object)
    with ``url``, ``title``, ``snippet`` and optionally ``content``, the page's text or
    HTML: such pages are saved as Markdown (``_agent.rendered_content_paths``).
    ``jupyter_brain.web_search(None)`` removes it. Returns ``fn`` unchanged.
    """
    from .notebook.web_search import register_web_search

    register_web_search(fn)
    return fn


def load_ipython_extension(ipython: Any) -> None:
    from .magics import AgentMagics

    magics = AgentMagics(shell=ipython, parent=ipython)
    from .notebook.governance import load_governance

    load_governance(magics)  # the admin's policy, read now (issue #38)
    ipython.register_magics(magics)
    ipython.events.register("post_run_cell", magics.cell_errors)  # for %agent fix
    magics.lab.start()  # a comm to the JupyterLab extension, when there is one
    from .notebook.kernel_channel import quiet_subshell_teardown_warning

    quiet_subshell_teardown_warning()  # ipykernel's own, when a front-end deletes a subshell
    from .notebook import warm_up

    warm_up.start()  # the first turn's imports, tokenizer and tool schemas, in the background
    # Listed as a configurable so `%config AgentMagics.think = "medium"` reaches it.
    if magics not in ipython.configurables:
        ipython.configurables.append(magics)


def unload_ipython_extension(ipython: Any) -> None:
    """Stop recording failing cells, close the kept providers; the rest is IPython's (present
    so %reload_ext works)."""
    magics = ipython.magics_manager.registry.get("AgentMagics")
    cache = getattr(magics, "provider_cache", None)
    if cache is not None:
        cache.close()
    hook = getattr(magics, "cell_errors", None)
    if hook is not None and hook in ipython.events.callbacks.get("post_run_cell", []):
        ipython.events.unregister("post_run_cell", hook)
