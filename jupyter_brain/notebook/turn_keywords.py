"""A cell's per-turn keywords for ``run_turn``: its context pack size, citations, the
runtime metadata of the resolved provider, and the ``--skill`` file's text."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .budget import budget_caps
from .skills import load_skill


def turn_keywords(options: Any, provider: Any, data_dir: str | Path, runtime: str = "full",
                  agent_skills: Any = None) -> dict[str, Any]:
    """``top_k``, ``show_citations``, ``runtime_provider`` / ``runtime_model`` /
    ``runtime_environment`` and ``skill_context`` for the cell (a missing skill is a
    UsageError, before the turn starts). ``runtime`` is ``AgentMagics.runtime``: full,
    model (no date, no Python: the same on every machine) or off (no runtime message).
    ``agent_skills``: the Agent Skills ``--skill NAME`` may force in (``SkillCatalog``)."""
    named = runtime != "off"
    return {
        "top_k": options.top_k,
        "show_citations": options.citations,
        "runtime_provider": str(getattr(provider, "name", "") or "") if named else "",
        "runtime_model": str(getattr(provider, "model", "") or "") if named else "",
        "runtime_environment": runtime == "full",
        "skill_context": (load_skill(data_dir, options.skill, agent_skills=agent_skills)
                          if options.skill else None),
        "web_mode": options.web,  # --web on|off (agent/web)
        "budget": budget_caps(options),  # --max-cost, --max-tokens-total, AgentMagics.max_cost_per_session
    }


def prompt_directory(runtime: str) -> str:
    """The working directory as the system prompt names it: the full path under runtime
    ``full``; otherwise only the folder's name, so that a notebook's requests (and the
    token counts it saves) are the same wherever it is checked out."""
    cwd = os.getcwd()
    return cwd if runtime == "full" else (os.path.basename(cwd) or cwd)
