"""Agent Skills: discovery on the folder chain and at home, validation per the
specification (a bad skill is one line naming its file and field), progressive disclosure."""

from __future__ import annotations

from pathlib import Path

from jupyter_brain.agent.hooks import ToolOffer
from jupyter_brain.conventions import MAX_SKILLS_INDEX_CHARS, ConventionsHook, find_conventions

from .tree import project, skill


def test_skills_are_found_validated_and_the_nearest_wins(tmp_path: Path) -> None:
    _, notebook, home = project(tmp_path)
    catalog = find_conventions(notebook, home=home).skills
    assert [(s.name, s.shown) for s in catalog.skills] == [
        ("commit-msg", "~/.claude/skills/commit-msg"),
        ("plot-style", "../../.agents/skills/plot-style"),
        ("sql-review", ".claude/skills/sql-review"),
    ]
    plots = catalog.get("plot-style")
    assert plots is not None and plots.license == "MIT" and plots.metadata == {"author": "data-team"}
    assert plots.allowed_tools == ("run_python", "read_file")
    assert catalog.shadowed == ["plot-style: ~/.agents/skills/plot-style"]
    lines = sorted(p.line() for p in catalog.problems)
    assert lines == [
        "../../.github/skills/Bad_Name/SKILL.md: name: 'Bad_Name': only lowercase letters, digits and hyphens, "
        "not starting or ending with a hyphen, no double hyphen",
        "../../.github/skills/bad-yaml/SKILL.md: frontmatter: not valid YAML (line 3)",
        "../../.github/skills/long-text/SKILL.md: description: 1025 characters; at most 1024",
        "../../.github/skills/no-description/SKILL.md: description: missing (required)",
        "../../.github/skills/no-frontmatter/SKILL.md: frontmatter: missing: the file must start with a '---' YAML block",
        "../../.github/skills/wrong-folder/SKILL.md: name: 'other-name' must equal the folder's name 'wrong-folder'",
    ]


def test_names_follow_the_specification(tmp_path: Path) -> None:
    root = tmp_path / ".agents/skills"
    for name in ("-lead", "trail-", "dou--ble", "a" * 65):
        skill(root, name, f"name: {name}\ndescription: d")
    skill(root, "a" * 64, f"name: {'a' * 64}\ndescription: d")
    (tmp_path / ".git").mkdir()
    catalog = find_conventions(tmp_path, home=tmp_path / "nohome").skills
    assert [s.name for s in catalog.skills] == ["a" * 64]
    assert {p.field for p in catalog.problems} == {"name"} and len(catalog.problems) == 4


def test_every_turn_offers_names_and_descriptions_never_bodies(tmp_path: Path) -> None:
    _, notebook, home = project(tmp_path)
    found = find_conventions(notebook, home=home)
    hook = ConventionsHook(found)
    layers = {layer.kind: layer.render() for layer in hook.context_layers(None)}
    assert set(layers) == {"agents_md", "skills"}
    assert "- plot-style: House style for every chart." in layers["skills"]
    assert "palette" not in layers["skills"] and "step by step" not in layers["skills"]
    offer = hook.prepare_tools(None, ToolOffer(registry=frozenset({"run_python"})))
    (load,) = offer.tools
    assert load.name == "load_skill"
    text = load.fn(name="plot-style")
    assert text.startswith("Skill plot-style (folder ../../.agents/skills/plot-style):")
    assert "Use the palette in references/palette.md." in text
    assert "- ../../.agents/skills/plot-style/references/palette.md" in text
    assert "- ../../.agents/skills/plot-style/scripts/style.py" in text


def test_a_long_skill_index_is_bounded(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    for n in range(20):
        skill(tmp_path / ".agents/skills", f"s{n:02d}", f"name: s{n:02d}\ndescription: {'word ' * 150}")
    text = find_conventions(tmp_path, home=tmp_path / "nohome").skills_index_text()
    assert len(text) < MAX_SKILLS_INDEX_CHARS + 200
    assert text.splitlines()[-1].startswith("- (descriptions left out for space) s07, s08")
