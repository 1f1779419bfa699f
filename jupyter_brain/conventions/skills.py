"""Agent Skills (agentskills.io): folders holding a ``SKILL.md`` with YAML frontmatter
(``name``, ``description``; optional ``license``, ``compatibility``, ``metadata``,
``allowed-tools``) and optional ``scripts/``, ``references/`` and ``assets/``.

Found in ``.agents/skills``, ``.claude/skills`` and ``.github/skills`` of each folder on the
chain (nearest first), then ``~/.agents/skills`` and ``~/.claude/skills``; the first skill of
a name wins. Validated per the specification; a bad skill is one ``SkillProblem`` naming its
file and field, and is left out — it never stops a turn. Only names and descriptions are
read up front (progressive disclosure); a body is read when a turn needs it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SKILL_FILE = "SKILL.md"
PROJECT_SKILL_DIRS = (".agents/skills", ".claude/skills", ".github/skills")
HOME_SKILL_DIRS = (".agents/skills", ".claude/skills")
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
MAX_SKILL_FILE_BYTES = 200_000  # instructions, not data; the spec advises < 5,000 tokens of body
MAX_BODY_CHARS = 40_000  # a body sent to the model is clipped here (and says so)
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # lowercase letters, digits, single inner hyphens
RESOURCE_DIRS = ("scripts", "references", "assets")
MAX_LISTED_FILES = 40


@dataclass(frozen=True)
class AgentSkill:
    """One valid skill: its frontmatter and where it lives (the body is read on demand)."""

    name: str
    description: str
    folder: Path
    shown: str  # the folder as people and the model read it (relative, or ~/…)
    license: str = ""
    compatibility: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE

    def body(self) -> str:
        """The instructions below the frontmatter (clipped at ``MAX_BODY_CHARS``)."""
        text = _read(self.file)
        _, body = split_frontmatter(text)
        body = body.strip()
        if len(body) > MAX_BODY_CHARS:
            body = body[:MAX_BODY_CHARS] + f"\n[… skill clipped at {MAX_BODY_CHARS:,} characters]"
        return body

    def resources(self) -> list[str]:
        """Its ``scripts/``, ``references/`` and ``assets/`` files, as paths the file tools read."""
        found: list[str] = []
        for sub in RESOURCE_DIRS:
            folder = self.folder / sub
            if not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    found.append(f"{self.shown}/{path.relative_to(self.folder).as_posix()}")
                if len(found) >= MAX_LISTED_FILES:
                    return [*found, "… (more files not listed)"]
        return found

    def instructions(self) -> str:
        """The body as the model reads it: a header naming the skill and folder, its files."""
        files = self.resources()
        listing = ("\n\nFiles of this skill (read them with read_file when the instructions say so):\n"
                   + "\n".join(f"- {f}" for f in files)) if files else ""
        return f"Skill {self.name} (folder {self.shown}):\n\n{self.body()}{listing}"


@dataclass(frozen=True)
class SkillProblem:
    """A skill left out: its file (shown path), the field at fault and why."""

    file: str
    field: str
    reason: str

    def line(self) -> str:
        return f"{self.file}: {self.field}: {self.reason}"


@dataclass(frozen=True)
class SkillRoot:
    """A folder of skill folders (``.claude/skills``) and how it is shown."""

    path: Path
    shown: str


@dataclass
class SkillCatalog:
    """The skills a notebook may use, the problems found, and the roots searched."""

    skills: list[AgentSkill] = field(default_factory=list)
    problems: list[SkillProblem] = field(default_factory=list)
    roots: list[SkillRoot] = field(default_factory=list)
    shadowed: list[str] = field(default_factory=list)  # "name: folder" hidden by a nearer skill

    def get(self, name: str) -> AgentSkill | None:
        return next((s for s in self.skills if s.name == name), None)


def skill_roots(chain: list[Path], home: Path | None, shown: Any) -> list[SkillRoot]:
    """The existing skill folders, in the order they are searched (nearest first, home last).
    ``shown(path)`` writes a path for people."""
    candidates = [folder / sub for folder in chain for sub in PROJECT_SKILL_DIRS]
    if home is not None:
        candidates += [home / sub for sub in HOME_SKILL_DIRS]
    roots: list[SkillRoot] = []
    seen: set[Path] = set()
    for path in candidates:
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            continue
        if real in seen or not real.is_dir():
            continue
        seen.add(real)
        roots.append(SkillRoot(real, shown(real)))
    return roots


def discover(roots: Iterable[SkillRoot]) -> SkillCatalog:
    """Every skill folder of ``roots``, read and validated; the first of a name wins."""
    catalog = SkillCatalog(roots=list(roots))
    for root in catalog.roots:
        try:
            entries = sorted(p for p in root.path.iterdir() if p.is_dir())
        except OSError as exc:
            catalog.problems.append(SkillProblem(root.shown, "folder", f"unreadable ({exc.strerror or exc})"))
            continue
        for folder in entries:
            if not (folder / SKILL_FILE).is_file():
                continue
            skill, problem = read_skill(folder, f"{root.shown}/{folder.name}")
            if problem is not None:
                catalog.problems.append(problem)
            elif skill is not None:
                if catalog.get(skill.name) is None:
                    catalog.skills.append(skill)
                else:
                    catalog.shadowed.append(f"{skill.name}: {skill.shown}")
    catalog.skills.sort(key=lambda s: s.name)
    return catalog


def read_skill(folder: Path, shown: str) -> tuple[AgentSkill | None, SkillProblem | None]:
    """One skill folder: its frontmatter validated per the specification."""
    where = f"{shown}/{SKILL_FILE}"
    try:
        text = _read(folder / SKILL_FILE)
    except OSError as exc:
        return None, SkillProblem(where, "file", f"unreadable ({exc.strerror or exc})")
    head, _ = split_frontmatter(text)
    if head is None:
        return None, SkillProblem(where, "frontmatter", "missing: the file must start with a '---' YAML block")
    import yaml  # type: ignore[import-untyped]  # no stubs; imported here: a turn with no skill folder never needs it (#40)

    try:
        data = yaml.safe_load(head)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 2})" if mark is not None else ""
        return None, SkillProblem(where, "frontmatter", f"not valid YAML{at}")
    if not isinstance(data, dict):
        return None, SkillProblem(where, "frontmatter", "must be a YAML mapping of fields")
    problem = _check(data, folder.name)
    if problem is not None:
        field_name, reason = problem
        return None, SkillProblem(where, field_name, reason)
    metadata = data.get("metadata") or {}
    return AgentSkill(
        name=data["name"], description=" ".join(str(data["description"]).split()), folder=folder, shown=shown,
        license=str(data.get("license") or ""), compatibility=str(data.get("compatibility") or ""),
        metadata={str(k): str(v) for k, v in metadata.items()},
        allowed_tools=tuple(str(data.get("allowed-tools") or "").split()),
    ), None


def _check(data: dict[str, Any], folder_name: str) -> tuple[str, str] | None:
    name = data.get("name")
    if not isinstance(name, str) or not name:
        return "name", "missing (required)"
    if len(name) > MAX_NAME_CHARS:
        return "name", f"{len(name)} characters; at most {MAX_NAME_CHARS}"
    if not _NAME.match(name):
        return "name", (f"{name!r}: only lowercase letters, digits and hyphens, "
                        "not starting or ending with a hyphen, no double hyphen")
    if name != folder_name:
        return "name", f"{name!r} must equal the folder's name {folder_name!r}"
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        return "description", "missing (required)"
    if len(description) > MAX_DESCRIPTION_CHARS:
        return "description", f"{len(description)} characters; at most {MAX_DESCRIPTION_CHARS}"
    compatibility = data.get("compatibility")
    if compatibility is not None and (not isinstance(compatibility, str) or len(compatibility) > MAX_COMPATIBILITY_CHARS):
        return "compatibility", f"must be text of at most {MAX_COMPATIBILITY_CHARS} characters"
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        return "metadata", "must be a mapping of keys to values"
    tools = data.get("allowed-tools")
    if tools is not None and not isinstance(tools, str):
        return "allowed-tools", "must be a space-separated string of tool names"
    return None


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(the YAML between the leading ``---`` lines, the body); (None, text) without one."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1:])
    return None, text


def _read(path: Path) -> str:
    with open(path, "rb") as handle:
        return handle.read(MAX_SKILL_FILE_BYTES).decode("utf-8", errors="replace")
