"""jupyter-brain: an LLM agent that lives in the Jupyter kernel.

``%load_ext jupyter_brain`` registers ``%%agent`` and ``%agent``. Public names are
imported lazily so that loading the extension stays fast and the model SDKs are only
imported when a provider that needs them is built.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

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
    "SessionManager": "jupyter_brain.session",
    "TokenCounter": "jupyter_brain.agent.context",
    "ContextWarningTracker": "jupyter_brain.agent.context",
    "SlidingWindowSummary": "jupyter_brain.agent.context",
    "TokenBudget": "jupyter_brain.agent.context",
    "SemanticRelevance": "jupyter_brain.agent.context",
    "Workspace": "jupyter_brain.agent.workspace",
    "CheckpointStore": "jupyter_brain.agent.checkpoints",
}

__all__ = [*_PUBLIC, "tool", "load_ipython_extension", "unload_ipython_extension"]


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


def load_ipython_extension(ipython: Any) -> None:
    from .magics import AgentMagics

    magics = AgentMagics(shell=ipython, parent=ipython)
    ipython.register_magics(magics)
    # Listed as a configurable so `%config AgentMagics.think = "medium"` reaches it.
    if magics not in ipython.configurables:
        ipython.configurables.append(magics)


def unload_ipython_extension(ipython: Any) -> None:
    """Nothing to undo beyond what IPython does; present so %reload_ext works."""
