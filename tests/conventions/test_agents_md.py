"""AGENTS.md: the nearest file on the folder chain wins, bounded at 8 KB; the chain stops at
the repository root (or home)."""

from __future__ import annotations

from pathlib import Path

from jupyter_brain.conventions import MAX_AGENTS_MD_BYTES, find_conventions
from jupyter_brain.conventions.folders import folder_chain

from .tree import project


def test_the_nearest_agents_md_wins_and_names_what_it_overrides(tmp_path: Path) -> None:
    repo, notebook, home = project(tmp_path)
    found = find_conventions(notebook, home=home)
    assert found.agents_md is not None
    assert found.agents_md.shown == "../AGENTS.md" and "Plot with seaborn." in found.agents_md.text
    assert found.agents_md.overridden == ("../../AGENTS.md",)  # the repo's; home is above the repository root
    layer = found.agents_md.layer_text()
    assert "Plot with seaborn." in layer and "polars" not in layer and "Home rules" not in layer
    assert found.context_lines()[0] == "AGENTS.md: ../AGENTS.md (36 bytes); overrides ../../AGENTS.md"
    (notebook / "AGENTS.md").write_text("Q3 rules.", encoding="utf-8")  # nested deeper: now it wins
    assert find_conventions(notebook, home=home).agents_md.text == "Q3 rules."  # type: ignore[union-attr]


def test_the_chain_stops_at_the_repository_root_or_home(tmp_path: Path) -> None:
    repo, notebook, home = project(tmp_path)
    assert folder_chain(notebook, home)[-1] == repo.resolve()
    (repo / ".git").rmdir()
    assert folder_chain(notebook, home)[-1] == home.resolve()
    outside = tmp_path / "elsewhere" / "deep"
    outside.mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("never read", encoding="utf-8")
    assert folder_chain(outside, home) == [outside.resolve()]  # neither: the folder alone
    assert find_conventions(outside, home=home).agents_md is None


def test_a_long_agents_md_is_cut_at_a_line_and_says_so(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    line = "Rule: keep every chart readable.\n"
    (tmp_path / "AGENTS.md").write_text(line * 400, encoding="utf-8")  # 13,200 bytes
    found = find_conventions(tmp_path, home=tmp_path / "nohome").agents_md
    assert found is not None and found.cut and found.size == len(line) * 400
    assert len(found.text.encode()) <= MAX_AGENTS_MD_BYTES and found.text.endswith("readable.")
    assert "cut at 8,192 of 13,200 bytes; the rest is not sent" in found.layer_text()


def test_off_reads_no_agents_md(tmp_path: Path) -> None:
    _, notebook, home = project(tmp_path)
    found = find_conventions(notebook, home=home, agents_md=False)
    assert found.agents_md is None and found.context_lines()[0] == "AGENTS.md: off (AgentMagics.agents_md = False)"
    assert found.skills.skills  # the skills are still offered
