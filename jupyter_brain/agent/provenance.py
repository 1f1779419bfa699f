"""Prompt provenance: which prompt template produced a turn's system prompt.

The reference design's ``prompt_*`` fields travel with every turn (span attributes and
the turn's event-log record); ``prompt_render_hash`` is recomputed per turn from the
system prompt as actually rendered, so two turns with the same hash saw the same prompt.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class PromptProvenance:
    prompt_id: str | None = None
    prompt_version: str | None = None
    prompt_tags: frozenset[str] | None = None
    prompt_engine: str | None = None
    prompt_render_hash: str | None = None
    prompt_variables: tuple[str, ...] | None = None

    def rendered(self, system_prompt: str) -> PromptProvenance:
        """This provenance with the hash of the prompt as rendered for a turn."""
        return replace(self, prompt_render_hash=render_hash(system_prompt))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: unset fields left out, tags sorted, variables as a list."""
        out: dict[str, Any] = {}
        for name in ("prompt_id", "prompt_version", "prompt_engine", "prompt_render_hash"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.prompt_tags is not None:
            out["prompt_tags"] = sorted(self.prompt_tags)
        if self.prompt_variables is not None:
            out["prompt_variables"] = list(self.prompt_variables)
        return out


def render_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
