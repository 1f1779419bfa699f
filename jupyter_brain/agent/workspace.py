"""Workspace: the current state of the user's world, rendered fresh for every request.

The rendered text goes into the request as its own system part (``"kind":
"workspace"``) and is never appended to history, so N model calls cost one copy of it,
not N. It must be *stable*: the same state renders byte-identical text (sorted names, no
clocks, no memory addresses), which lets a provider's prompt cache reuse it.

Sections are plain callables returning text, so this module knows nothing of IPython;
``jupyter_brain.tools.workspace_context`` supplies the notebook's sections.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _rough_count(text: str) -> int:
    return max(1, len(text) // 4)


@dataclass
class WorkspaceSection:
    """One titled part of the workspace; ``weight`` is its share of the token budget."""

    title: str
    render: Callable[[], str]
    weight: float = 1.0


@dataclass
class Workspace:
    """Renders its sections within ``budget_tokens`` (clipping the largest first).

    ``count`` is the token counter (``TokenCounter.count_text``); a section that fails
    renders as a one-line note instead of breaking the request.
    """

    sections: list[WorkspaceSection] = field(default_factory=list)
    budget_tokens: int = 2_000
    count: Callable[[str], int] = _rough_count

    def __call__(self) -> str:
        return self.render()

    def render(self) -> str:
        parts: list[tuple[WorkspaceSection, list[str]]] = []
        for section in self.sections:
            try:
                body = section.render()
            except Exception as exc:  # noqa: BLE001 - a broken variable must not break the turn
                body = f"(unavailable: {type(exc).__name__}: {exc})"
            body = ADDRESS.sub("", body or "").strip()
            if body:
                parts.append((section, body.splitlines()))
        if not parts:
            return ""
        total_weight = sum(s.weight for s, _ in parts) or 1.0
        overhead = self.count("<workspace>\n</workspace>") + sum(self.count(f"## {s.title}") for s, _ in parts)
        available = max(0, self.budget_tokens - overhead)
        budgets = {id(s): int(available * s.weight / total_weight) for s, _ in parts}
        # Sections under their share give the rest to the others, in order.
        sizes = {id(s): self.count("\n".join(lines)) for s, lines in parts}
        spare = sum(max(0, budgets[id(s)] - sizes[id(s)]) for s, _ in parts)
        for s, _ in parts:
            need = sizes[id(s)] - budgets[id(s)]
            if need > 0 and spare > 0:
                extra = min(need, spare)
                budgets[id(s)] += extra
                spare -= extra
        out = ["<workspace>"]
        for section, lines in parts:
            out.append(f"## {section.title}")
            out.extend(self._fit(lines, budgets[id(section)], sizes[id(section)]))
        out.append("</workspace>")
        return "\n".join(out)

    def _fit(self, lines: list[str], budget: int, size: int) -> list[str]:
        """Keep whole lines from the top while they fit; say how many were left out."""
        if size <= budget:
            return lines
        kept: list[str] = []
        used = 0
        for i, line in enumerate(lines):
            cost = self.count(line) + 1
            if used + cost > budget - 12:  # room for the note
                kept.append(f"… {len(lines) - i} more lines not shown (ask a tool for details)")
                break
            kept.append(line)
            used += cost
        return kept
