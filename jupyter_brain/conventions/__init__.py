"""The field's shared conventions for agents, read from the notebook's folder chain:
``AGENTS.md`` (a project's rules) and Agent Skills (``SKILL.md`` folders).

One entry point, ``find_conventions(folder)`` → ``ProjectConventions``; ``ConventionsHook(found)``
is the turn's ``TurnHook`` (two fresh context layers and the ``load_skill`` tool). This package
imports ``agent/`` (hooks, tools, layers) and PyYAML, never IPython or the notebook layer.
"""

from __future__ import annotations

from .agents_md import MAX_AGENTS_MD_BYTES, AgentsMd
from .hook import LOAD_SKILL, ConventionsHook
from .project import MAX_SKILLS_INDEX_CHARS, ProjectConventions, find_conventions
from .skills import AgentSkill, SkillCatalog, SkillProblem

__all__ = ["LOAD_SKILL", "MAX_AGENTS_MD_BYTES", "MAX_SKILLS_INDEX_CHARS", "AgentSkill", "AgentsMd", "ConventionsHook",
           "ProjectConventions", "SkillCatalog", "SkillProblem", "find_conventions"]
