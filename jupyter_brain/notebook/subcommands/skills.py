"""``%agent skills``: the skill files a cell can use with ``--skill NAME``."""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError

from ..skills import find_skills, skill_folders


def cmd_skills(magics: Any, rest: list[str]) -> None:
    if rest:
        raise UsageError("%agent skills takes no arguments")
    skills = find_skills(magics.data_dir)
    folders = " or ".join(str(f) for f in skill_folders(magics.data_dir))
    if not skills:
        print(f"No skills yet: put Markdown files of instructions in {folders} "
              "(e.g. skills/sql.md), then run a cell with %%agent --skill sql.")
        return
    width = max(len(s.name) for s in skills)
    for skill in skills:
        print(f"  {skill.name:<{width}}  {skill.summary()}")
    print(f"\n{len(skills)} skill{'s' * (len(skills) != 1)} (from {folders}); use one with %%agent --skill NAME")
