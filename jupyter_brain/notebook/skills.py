"""Skills: Markdown files of instructions a cell adds to its turn (``%%agent --skill NAME``).

``NAME.md`` is looked up in ``<data_dir>/skills/`` (``.jupyter_brain/skills/``), then in
``./skills/`` of the user's folder; the first found wins. Where no such file exists, an
Agent Skill of that name (``jupyter_brain/conventions``: ``.agents/skills/NAME/SKILL.md`` …)
is forced in: its body, not only its description. The text becomes the turn's
``skill_context`` (a fresh system message). ``%agent skills`` lists both kinds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

MAX_SKILL_BYTES = 200_000  # a skill is instructions, not a data file
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


@dataclass(frozen=True)
class Skill:
    name: str
    path: Path

    def summary(self) -> str:
        """The skill's first non-empty line (a Markdown heading's text), for listings."""
        try:
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    text = line.strip().lstrip("#").strip()
                    if text:
                        return text[:120]
        except OSError as exc:
            return f"(unreadable: {exc.strerror or exc})"
        return "(empty)"


def skill_folders(data_dir: str | Path) -> list[Path]:
    return [Path(data_dir) / "skills", Path.cwd() / "skills"]


def find_skills(data_dir: str | Path) -> list[Skill]:
    """Every skill, by name; a name in ``<data_dir>/skills`` hides the same one in ``./skills``."""
    found: dict[str, Skill] = {}
    for folder in skill_folders(data_dir):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            if path.is_file() and _NAME.match(path.stem) and path.stem not in found:
                found[path.stem] = Skill(path.stem, path)
    return sorted(found.values(), key=lambda s: s.name.lower())


def load_skill(data_dir: str | Path, name: str, prog: str = "%%agent", agent_skills: Any = None) -> str:
    """The text of skill ``name`` (``sql`` or ``sql.md``), else the instructions of the Agent
    Skill ``name`` in ``agent_skills`` (a ``SkillCatalog``); a clear UsageError when neither is."""
    stem = name.strip().removesuffix(".md")
    if not _NAME.match(stem):
        raise UsageError(f"{prog}: --skill needs a skill name (letters, digits, '_', '-', '.'), got {name!r}")
    skills = {s.name: s for s in find_skills(data_dir)}
    skill = skills.get(stem)
    agent_skill = agent_skills.get(stem) if agent_skills is not None and skill is None else None
    if agent_skill is not None:
        try:
            return str(agent_skill.instructions())
        except OSError as exc:
            raise UsageError(f"{prog}: cannot read skill {stem!r} ({agent_skill.file}): {exc.strerror or exc}") from None
    if skill is None:
        where = " or ".join(str(f) for f in skill_folders(data_dir))
        known = ", ".join([*skills, *(s.name for s in getattr(agent_skills, "skills", ()))]) or "none yet"
        raise UsageError(f"{prog}: no skill {stem!r}: looked for {stem}.md in {where} and for an Agent Skill "
                         f"folder {stem}/SKILL.md. Available skills: {known} "
                         "(%agent skills lists them).")
    try:
        data = skill.path.read_bytes()[:MAX_SKILL_BYTES]
    except OSError as exc:
        raise UsageError(f"{prog}: cannot read skill {stem!r} ({skill.path}): {exc.strerror or exc}") from None
    text = data.decode("utf-8", errors="replace").strip()
    if not text:
        raise UsageError(f"{prog}: skill {stem!r} ({skill.path}) is empty")
    return text
