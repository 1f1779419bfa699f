"""AGENTS.md: a project's rules for agents (agents.md, the Agentic AI Foundation's format).

The nearest ``AGENTS.md`` on the folder chain wins: a nested file overrides the ones above
it, which are named (``overridden``) but not sent. Its text is bounded at
``MAX_AGENTS_MD_BYTES`` (8 KB, about 2,000 tokens): a longer file is cut at the last line
that fits, and the request says how much was left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

FILE_NAME = "AGENTS.md"
MAX_AGENTS_MD_BYTES = 8_192  # ~2k tokens: rules, not a manual; the rest is cut, and the cut is said


@dataclass(frozen=True)
class AgentsMd:
    """The AGENTS.md a turn follows: where it is, its (bounded) text, what it overrides."""

    path: Path
    shown: str  # the path as written for people and the model (relative, or ~/…)
    text: str
    size: int  # bytes on disk
    cut: bool = False
    overridden: tuple[str, ...] = field(default_factory=tuple)  # farther files, shown paths

    def layer_text(self) -> str:
        """The context layer: the rules under a header naming the file."""
        note = (f"\n[… {self.shown} cut at {MAX_AGENTS_MD_BYTES:,} of {self.size:,} bytes; the rest is not sent]"
                if self.cut else "")
        return (f"Project instructions from {self.shown} (AGENTS.md: follow them unless the user says "
                f"otherwise):\n\n{self.text}{note}")

    def describe(self) -> str:
        """One line for ``%agent context``."""
        size = f"{self.size:,} bytes" + (f", cut at {MAX_AGENTS_MD_BYTES:,}" if self.cut else "")
        over = f"; overrides {', '.join(self.overridden)}" if self.overridden else ""
        return f"AGENTS.md: {self.shown} ({size}){over}"


def find_agents_md(chain: list[Path], shown: dict[Path, str]) -> tuple[AgentsMd | None, list[str]]:
    """The nearest readable AGENTS.md on ``chain`` (nearest first) and the problems met
    (an unreadable file is skipped with one line, never an error)."""
    found: list[Path] = [folder / FILE_NAME for folder in chain if (folder / FILE_NAME).is_file()]
    problems: list[str] = []
    for index, path in enumerate(found):
        try:
            data = path.read_bytes()
        except OSError as exc:
            problems.append(f"{shown.get(path, path)}: unreadable ({exc.strerror or exc})")
            continue
        text, cut = _bounded(data)
        overridden = tuple(shown.get(p, str(p)) for p in found[index + 1:])
        return AgentsMd(path, shown.get(path, str(path)), text, len(data), cut, overridden), problems
    return None, problems


def _bounded(data: bytes) -> tuple[str, bool]:
    if len(data) <= MAX_AGENTS_MD_BYTES:
        return data.decode("utf-8", errors="replace").strip(), False
    head = data[:MAX_AGENTS_MD_BYTES]
    line_end = head.rfind(b"\n")
    if line_end > MAX_AGENTS_MD_BYTES // 2:  # cut at a line when one ends in the second half
        head = head[:line_end]
    return head.decode("utf-8", errors="ignore").rstrip(), True
