"""``%agent skills``: the Agent Skills the model is offered (name, description, folder),
the ones left out (one line each, naming the file and the field), and the skill files a
cell can use with ``--skill NAME``."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ..conventions import cell_conventions
from ..skills import find_skills, skill_folders

DESCRIPTION_CHARS = 100  # a listing line, not the whole description


def cmd_skills(magics: Any, rest: list[str]) -> None:
    if rest:
        raise UsageError("%agent skills takes no arguments")
    catalog = cell_conventions(magics).skills
    files = find_skills(magics.data_dir)
    folders = " or ".join(str(f) for f in skill_folders(magics.data_dir))
    if not catalog.skills and not catalog.problems and not files:
        print("No skills yet: add an Agent Skill folder .agents/skills/NAME/SKILL.md (YAML name and description, "
              f"then its instructions), or Markdown files of instructions in {folders} (e.g. skills/sql.md).")
        return
    if catalog.skills:
        print("Agent Skills (offered by name and description; the model reads one with load_skill):")
        width = max(len(s.name) for s in catalog.skills)
        for skill in catalog.skills:
            text = skill.description
            if len(text) > DESCRIPTION_CHARS:
                text = text[:DESCRIPTION_CHARS - 1] + "…"
            print(f"  {skill.name:<{width}}  {text}  [{skill.shown}]")
    for hidden in catalog.shadowed:
        print(f"  hidden by a nearer skill of the same name: {hidden}")
    for problem in catalog.problems:
        print(f"  skipped {problem.line()}")
    if files:
        print(f"Skill files (from {folders}):")
        width = max(len(s.name) for s in files)
        for file in files:
            print(f"  {file.name:<{width}}  {file.summary()}")
    count = len(catalog.skills) + len(files)
    print(f"\n{count} skill{'s' * (count != 1)}; force one into a turn with %%agent --skill NAME")
