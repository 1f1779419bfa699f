"""One stand-in model for a whole notebook: each turn takes the script of its section.

A notebook's sections ask different questions, and each section has its own scripted
replies. Rather than a ``model = ...`` cell before every section, the notebook's one model
(``demo_setup(dataframe_model())``, the kernel's default provider) picks the script by what
the turn asks: its prompt, or for a section that shows a flag (``--think``, ``--strategy``)
the system prompt that flag writes. A new turn starts its section's script from the top, so
a cell re-run live gets the same replies again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jupyter_brain import ScriptedProvider
from jupyter_brain.providers.base import Message, ProviderError, ProviderResult, StreamEvent, ToolSchema

from ._base import pick


@dataclass(frozen=True)
class Section:
    """A section's script, and how its turns are recognised: regexes searched in the turn's
    prompt and in the system prompt (both must match; an empty pattern matches anything)."""

    script: Callable[[], ScriptedProvider]
    prompt: str = ""
    system: str = ""

    def answers(self, prompt: str, system: str) -> bool:
        return bool(re.search(self.prompt, prompt) and re.search(self.system, system))


def turn_prompt(messages: list[Message]) -> tuple[int, str]:
    """(index, text) of the turn's prompt: the last user message (tool results are ``tool``)."""
    index = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return index, str(messages[index].get("content", "")) if index >= 0 else ""


class ScriptedByPrompt(ScriptedProvider):
    """A ``ScriptedProvider`` that answers each turn from the first section matching it.

    Reflection and summary requests of a turn go to the script of the turn they belong to
    (the last turn routed), so its reflection queue stays in step."""

    def __init__(self, sections: Mapping[str, Section], *, model: str = "scripted") -> None:
        super().__init__(["(routed by section)"], model=model)
        self.sections = dict(sections)
        self._turn: tuple[int, str] | None = None
        self._script: ScriptedProvider | None = None

    def __repr__(self) -> str:
        return f"ScriptedByPrompt(sections={list(self.sections)})"

    def clone(self) -> ScriptedByPrompt:
        """Every section's script from its start (``%%compare`` clones one per run)."""
        return ScriptedByPrompt(self.sections, model=self.model)

    def generate(self, messages: list[Message], tools: list[ToolSchema], *, timeout_s: float = 60.0,
                 thinking_budget: int = 0) -> ProviderResult:
        return self._script_for(messages).generate(messages, tools, timeout_s=timeout_s,
                                                   thinking_budget=thinking_budget)

    def generate_stream(self, messages: list[Message], tools: list[ToolSchema], *, timeout_s: float = 60.0,
                        thinking_budget: int = 0) -> Iterator[StreamEvent]:
        return self._script_for(messages).generate_stream(messages, tools, timeout_s=timeout_s,
                                                          thinking_budget=thinking_budget)

    def _script_for(self, messages: list[Message]) -> ScriptedProvider:
        side_request = any(m.get("kind") in ("reflection", "summary_request") for m in messages)
        if side_request and self._script is not None:
            return self._script
        turn = turn_prompt(messages)
        starts = turn[0] == len(messages) - 1  # the prompt is the last message: the turn's first call
        if self._script is None or starts or turn != self._turn:
            self._turn, self._script = turn, self._section(turn[1], messages).script()
        return self._script

    def _section(self, prompt: str, messages: list[Message]) -> Section:
        system = str(messages[0].get("content", "")) if messages and messages[0].get("role") == "system" else ""
        found = next((s for s in self.sections.values() if s.answers(prompt, system)), None)
        if found is None:
            first_line = prompt.strip().splitlines()[0] if prompt.strip() else ""
            raise ProviderError(f"the scripted stand-in has no reply for {first_line[:60]!r}: it answers this "
                                f"notebook's own prompts (sections {', '.join(self.sections)}); set an API key "
                                "for a real model", kind="other", provider="scripted")
        return found


def script_of(sections: Mapping[str, Section]) -> Any:
    """Picked like every demo model: ``"auto"`` live, else one model for all the sections."""
    return pick(lambda: ScriptedByPrompt(sections))


__all__ = ["ScriptedByPrompt", "Section", "script_of", "turn_prompt"]
