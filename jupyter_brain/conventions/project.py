"""The conventions in force for one notebook folder: ``ProjectConventions`` and
``find_conventions``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .agents_md import AgentsMd, find_agents_md
from .folders import folder_chain, home_folder, shown_path
from .skills import SkillCatalog, discover, skill_roots

MAX_SKILLS_INDEX_CHARS = 6_000  # the names-and-descriptions layer (~1.5k tokens); later skills are named only


@dataclass
class ProjectConventions:
    """What a notebook's folder chain holds: the AGENTS.md in force (``None``: none, or off)
    and the Agent Skills."""

    chain: list[Path]
    agents_md: AgentsMd | None = None
    agents_md_enabled: bool = True
    skills: SkillCatalog = field(default_factory=SkillCatalog)
    problems: list[str] = field(default_factory=list)  # AGENTS.md files that could not be read

    def skills_index_text(self) -> str:
        """The ``skills`` layer: every skill's name and description, never a body."""
        if not self.skills.skills:
            return ""
        lines = ["Agent Skills you can use. When a task matches a skill's description, call "
                 "load_skill(name) first to read its instructions, then follow them:"]
        used = len(lines[0])
        left_out: list[str] = []
        for skill in self.skills.skills:
            line = f"- {skill.name}: {skill.description}"
            if used + len(line) > MAX_SKILLS_INDEX_CHARS:
                left_out.append(skill.name)
                continue
            lines.append(line)
            used += len(line) + 1
        if left_out:
            lines.append(f"- (descriptions left out for space) {', '.join(left_out)}")
        return "\n".join(lines)

    def readable_folders(self) -> list[Path]:
        """The skill folders the file tools may read in (scripts/, references/, assets/)."""
        return [skill.folder for skill in self.skills.skills]

    def context_lines(self) -> list[str]:
        """``%agent context``'s lines: where the AGENTS.md came from, which skills are offered."""
        top = shown_path(self.chain[-1], self.chain) if self.chain else "."
        if not self.agents_md_enabled:
            lines = ["AGENTS.md: off (AgentMagics.agents_md = False)"]
        elif self.agents_md is None:
            lines = [f"AGENTS.md: none found from . up to {top}"]
        else:
            lines = [self.agents_md.describe()]
        lines += [f"  {p}" for p in self.problems]
        names = ", ".join(s.name for s in self.skills.skills)
        bad = f"; {len(self.skills.problems)} left out (%agent skills)" if self.skills.problems else ""
        lines.append(f"Agent Skills offered: {names or 'none'}{bad}")
        return lines


def find_conventions(start: str | Path, *, home: str | Path | None = None, agents_md: bool = True,
                     skills: bool = True) -> ProjectConventions:
    """The conventions in force for a notebook in ``start`` (read from disk now)."""
    home_dir = Path(home).expanduser().resolve() if home is not None else home_folder()
    chain = folder_chain(start, home_dir)
    found = ProjectConventions(chain=chain, agents_md_enabled=agents_md)
    if agents_md:
        shown = {folder / "AGENTS.md": shown_path(folder / "AGENTS.md", chain, home_dir) for folder in chain}
        found.agents_md, found.problems = find_agents_md(chain, shown)
    if skills:
        roots = skill_roots(chain, home_dir, lambda path: shown_path(path, chain, home_dir))
        found.skills = discover(roots)
    return found
