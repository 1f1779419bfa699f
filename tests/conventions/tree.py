"""A project tree for the conventions' tests: a repository with a root AGENTS.md, a nested
folder with its own, skills in three kinds of folders (one broken in each way that matters)
and a home folder with its own skill."""

from __future__ import annotations

from pathlib import Path


def skill(root: Path, name: str, frontmatter: str, body: str = "Do the thing step by step.") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}\n---\n\n{body}\n", encoding="utf-8")
    return folder


def project(tmp: Path) -> tuple[Path, Path, Path]:
    """(the repository root, the notebook's folder inside it, the home folder)."""
    home = tmp / "home"
    repo = home / "repo"
    notebook = repo / "analysis" / "q3"
    notebook.mkdir(parents=True)
    (repo / ".git").mkdir()
    (home / "AGENTS.md").write_text("Home rules: never reached from inside the repository.", encoding="utf-8")
    (repo / "AGENTS.md").write_text("# Repo rules\nUse polars, not pandas.\n", encoding="utf-8")
    (repo / "analysis" / "AGENTS.md").write_text("# Analysis rules\nPlot with seaborn.\n", encoding="utf-8")
    plots = skill(repo / ".agents/skills", "plot-style", "name: plot-style\ndescription: House style for every chart.\n"
                  "license: MIT\nmetadata:\n  author: data-team\nallowed-tools: run_python read_file",
                  body="Use the palette in references/palette.md.")
    (plots / "references").mkdir()
    (plots / "references" / "palette.md").write_text("blue #1f77b4", encoding="utf-8")
    (plots / "scripts").mkdir()
    (plots / "scripts" / "style.py").write_text("STYLE = 'house'\n", encoding="utf-8")
    skill(notebook / ".claude/skills", "sql-review", "name: sql-review\ndescription: Review SQL queries for joins.")
    skill(repo / ".github/skills", "Bad_Name", "name: Bad_Name\ndescription: upper case and underscore")
    skill(repo / ".github/skills", "wrong-folder", "name: other-name\ndescription: the name is not the folder's")
    skill(repo / ".github/skills", "long-text", "name: long-text\ndescription: " + "x" * 1025)
    skill(repo / ".github/skills", "no-description", "name: no-description")
    skill(repo / ".github/skills", "bad-yaml", "name: [unclosed\ndescription: x")
    (repo / ".github/skills/no-frontmatter").mkdir()
    (repo / ".github/skills/no-frontmatter/SKILL.md").write_text("just text", encoding="utf-8")
    skill(home / ".claude/skills", "commit-msg", "name: commit-msg\ndescription: Write commit messages.")
    skill(home / ".agents/skills", "plot-style", "name: plot-style\ndescription: the home one, hidden by the repo's")
    return repo, notebook, home
