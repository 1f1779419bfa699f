"""The conventions as a turn sees them: the ``agents_md`` layer (the nearest AGENTS.md), the
``skills`` layer (names and descriptions) and the ``load_skill`` tool that reads a body.

Why a tool and not BM25 on the descriptions: the model reads every description each turn
and knows, mid-task, when a skill applies — a prompt's words often do not (a skill for
"fitting a model" is needed by "why is my loss flat?"). A body BM25 picked wrongly costs
its whole length in every request of the turn; a tool call costs one short step only when
the model asks. The call is recorded like any tool call, so a replay sends the same body.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..agent.context.layers import ContextLayer
from ..agent.hooks import ToolOffer, TurnHook
from ..agent.tools import ToolError, tool

if TYPE_CHECKING:
    from .project import ProjectConventions

LOAD_SKILL = "load_skill"


class ConventionsHook(TurnHook):
    name = "conventions"

    def __init__(self, conventions: ProjectConventions) -> None:
        self.conventions = conventions

    def prepare_tools(self, ctx: Any, offer: ToolOffer) -> ToolOffer:
        if self.conventions.skills.skills and LOAD_SKILL not in offer.registry:
            offer.tools.append(load_skill_tool(self.conventions))
        return offer

    def context_layers(self, ctx: Any) -> Sequence[ContextLayer]:
        layers: list[ContextLayer] = []
        if self.conventions.agents_md is not None:
            layers.append(ContextLayer.fixed("agents_md", self.conventions.agents_md.layer_text()))
        index = self.conventions.skills_index_text()
        if index:
            layers.append(ContextLayer.fixed("skills", index))
        return layers


def load_skill_tool(conventions: ProjectConventions) -> Any:
    names = ", ".join(s.name for s in conventions.skills.skills)

    @tool(name=LOAD_SKILL, inline=True,
          description="Read an Agent Skill's instructions (and the list of its files) by name.",
          keywords=f"skill instructions how-to {names}")
    def load_skill(name: str) -> str:
        """Read an Agent Skill's instructions.

        Args:
            name: the skill's name, as listed under Agent Skills.
        """
        skill = conventions.skills.get(name.strip())
        if skill is None:
            raise ToolError(f"no skill {name!r}; the skills are: {names}")
        try:
            return skill.instructions()
        except OSError as exc:
            raise ToolError(f"skill {name!r} cannot be read now ({exc.strerror or exc})") from None

    return load_skill
