"""ThinkingManager: how much the model reasons, and when it stops to reflect.

Two counters drive reflection: the turn count (as in the reference design) and the
step count. In a notebook one cell is one turn, so ``reflect_every`` counts agent steps
(model calls): ``reflect_every=3`` on a 9-step turn reflects after steps 3, 6 and 9.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol


class Reflection(Protocol):
    """What the manager keeps of a reflection (a ``ReflectionResult``; ``reflection.py``
    uses the manager, so the manager names only this much of it)."""

    reflection: str


class ThinkLevel(Enum):
    OFF = "off"  # no thinking: fastest answers
    LOW = "low"  # brief (~500 tokens)
    MEDIUM = "medium"  # moderate (~2000 tokens)
    HIGH = "high"  # deep (~5000 tokens)

    @property
    def token_budget(self) -> int:
        return _BUDGETS[self]

    @property
    def prompt_prefix(self) -> str:
        return _PREFIXES[self]

    @classmethod
    def from_string(cls, value: Any) -> ThinkLevel:
        """Parse a level; anything unknown is OFF (the safe default)."""
        if isinstance(value, ThinkLevel):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            return cls.OFF


_BUDGETS = {ThinkLevel.OFF: 0, ThinkLevel.LOW: 500, ThinkLevel.MEDIUM: 2000, ThinkLevel.HIGH: 5000}

_PREFIXES = {
    ThinkLevel.OFF: "",
    ThinkLevel.LOW: "Wrap brief reasoning (a few sentences) in <think>...</think> before your answer.",
    ThinkLevel.MEDIUM: "Wrap your reasoning in <think>...</think> before your answer.",
    ThinkLevel.HIGH: (
        "Wrap thorough, step-by-step reasoning in <think>...</think> before your answer: "
        "consider alternatives, check your assumptions and verify intermediate results."
    ),
}


@dataclass
class ThinkingConfig:
    level: ThinkLevel = ThinkLevel.OFF
    reflect_every: int = 0  # 0 = never; N = reflect every N agent steps
    reflect_on_tool_error: bool = True
    reflect_on_uncertainty: bool = True


_UNCERTAIN_MARKERS = ("i'm not sure", "i am not sure", "unclear", "i don't know", "uncertain")


class ThinkingManager:
    def __init__(self, config: ThinkingConfig | None = None) -> None:
        self.config = config or ThinkingConfig()
        self._turn_count = 0
        self._step_count = 0
        self._tool_errors: list[str] = []
        self._last_reflection: Reflection | None = None
        self._last_reflected_step = 0
        self._uncertain = False

    # lifecycle ---------------------------------------------------------------
    def on_turn_start(self) -> None:
        self._turn_count += 1
        self._step_count = 0
        self._last_reflected_step = 0
        self._tool_errors.clear()
        self._uncertain = False

    def on_step(self, text: str = "") -> None:
        """One model call finished; ``text`` is checked for stated uncertainty."""
        self._step_count += 1
        lowered = text.lower()
        self._uncertain = any(marker in lowered for marker in _UNCERTAIN_MARKERS)

    def on_tool_error(self, error: str) -> None:
        self._tool_errors.append(str(error))

    def record_reflection(self, result: Reflection) -> None:
        self._last_reflection = result
        self._last_reflected_step = self._step_count
        self._tool_errors.clear()
        self._uncertain = False

    # state -------------------------------------------------------------------
    @property
    def turn_count(self) -> int:
        return self._turn_count

    @property
    def step_count(self) -> int:
        return self._step_count

    @property
    def tool_errors(self) -> list[str]:
        return list(self._tool_errors)

    @property
    def last_reflection(self) -> Reflection | None:
        return self._last_reflection

    # prompts -----------------------------------------------------------------
    def get_thinking_prompt(self, base_prompt: str, *, native: bool = False) -> str:
        """The system prompt with thinking instructions; unchanged at OFF.

        With ``native`` the provider thinks through its own API (Anthropic extended
        thinking), so the model is not asked to write ``<think>`` tags as well.
        """
        level = self.config.level
        if level is ThinkLevel.OFF:
            return base_prompt
        if native:
            instruction = (
                f"Reason carefully in your extended thinking (about {level.token_budget} tokens) "
                "before you answer or call a tool."
            )
        else:
            instruction = level.prompt_prefix
        return f"{base_prompt}\n\n## Thinking Instructions\n{instruction}"

    # reflection scheduling ---------------------------------------------------
    def reflection_trigger(self) -> str | None:
        """Why a reflection is due now ("tool_error", "uncertainty", "periodic"), or None."""
        cfg = self.config
        if cfg.level is ThinkLevel.OFF:
            return None
        if cfg.reflect_on_tool_error and self._tool_errors:
            return "tool_error"
        if cfg.reflect_on_uncertainty and self._uncertain:
            return "uncertainty"
        if (
            cfg.reflect_every > 0
            and self._step_count > 0
            and self._step_count % cfg.reflect_every == 0
            and self._last_reflected_step != self._step_count
        ):
            return "periodic"
        return None

    def should_reflect(self) -> bool:
        return self.reflection_trigger() is not None

    def get_reflection_prompt(
        self, messages: list[dict[str, Any]], tool_results: list[dict[str, Any]]
    ) -> str:
        goal = next(
            (m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), ""
        )
        lines = [
            "Pause and reflect on the progress of this task.",
            "",
            f"Task: {_clip(str(goal), 600)}",
            "",
            "Consider:",
            "1. What has been accomplished so far?",
            "2. Are we on track to answer the user's question?",
            "3. What information might still be missing?",
            "4. Should we adjust the approach?",
        ]
        recent = tool_results[-3:]
        if recent:
            lines += ["", "Recent tool results:"]
            for r in recent:
                status = r.get("status", "ok")
                lines.append(f"- {r.get('name', '?')} [{status}]: {_clip(str(r.get('output', '')), 300)}")
        if self._tool_errors:
            lines += ["", f"Note: the most recent tool error was: {_clip(self._tool_errors[-1], 400)}"]
        lines += [
            "",
            "Answer in a few sentences. End with 'Confidence: <0.0-1.0>' and, if the approach "
            "should change, 'Next: <the action to take>'.",
        ]
        return "\n".join(lines)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
