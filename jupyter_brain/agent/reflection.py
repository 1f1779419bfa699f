"""ReflectionEngine: an optional mid-turn self-assessment, never fatal, never injected.

The result goes to callbacks (the UI's reflection card) and the ThinkingManager; the
main message list never sees it, so reflection costs no context in later steps.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

from .budget import TurnBudget
from .callbacks import AgentCallbacks
from .thinking import ThinkingManager

log = logging.getLogger("jupyter_brain.reflection")

_REFLECTION_SYSTEM = (
    "You are a reflective assistant evaluating your own progress. "
    "Be concise and honest about what is working and what needs improvement."
)

# Models often decorate the labels as Markdown ("**Confidence:** 0.8", "- **Next**: …")
# and sometimes give a percentage ("Confidence: 85%").
_CONFIDENCE = re.compile(r"confidence[*_]*\s*[:=]\s*[*_]*\s*(\d+(?:\.\d+)?|\.\d+)\s*(%?)", re.IGNORECASE)
_NEXT = re.compile(
    r"^\s*(?:[-*>]\s+)?[*_]*(?:next|suggested action)[*_]*\s*[:=]\s*(?:[*_]+\s*)?(.+?)\s*$",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass
class ReflectionResult:
    reflection: str
    should_continue: bool = True  # always True: reflection never stops the loop
    suggested_action: str | None = None
    confidence: float = 0.7
    # Why it ran ("periodic", "tool_error", "uncertainty"); set by the harness.
    trigger: str | None = None
    # Tokens the reflection call used, so the turn's totals and cost include it.
    usage: Any = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "reflection": self.reflection,
            "should_continue": self.should_continue,
            "suggested_action": self.suggested_action,
            "confidence": self.confidence,
        }


class ReflectionEngine:
    """Stateless: turn-scoped objects come in per call, so one engine serves many turns."""

    def __init__(
        self,
        provider: Any,
        thinking_manager: ThinkingManager,
        callbacks: AgentCallbacks | None = None,
    ) -> None:
        self.provider = provider
        self.thinking_manager = thinking_manager
        self.callbacks = callbacks or AgentCallbacks()

    def should_reflect(self) -> bool:
        return self.thinking_manager.should_reflect()

    def reflect(
        self,
        messages: list[dict[str, Any]],
        tool_results: list[dict[str, Any]],
        budget: TurnBudget,
        provider: Any = None,
    ) -> ReflectionResult:
        """``provider``: who answers this reflection (default the engine's; the loop passes
        its own, checked by the turn's hooks first)."""
        if not budget.claim_reflection():
            return ReflectionResult(reflection="[budget exhausted]", should_continue=True)
        if budget.is_expired():
            return ReflectionResult(reflection="[deadline expired]", should_continue=True)
        try:
            prompt = self.thinking_manager.get_reflection_prompt(messages, tool_results)
            timeout_s = min(30, max(5, int(budget.remaining_s())))
            answer = (provider or self.provider).generate(
                [
                    {"role": "system", "content": _REFLECTION_SYSTEM, "kind": "reflection"},
                    {"role": "user", "content": prompt},
                ],
                [],
                timeout_s=timeout_s,
            )
            text = (answer.text or "").strip()
            result = ReflectionResult(
                reflection=text,
                should_continue=True,
                suggested_action=_suggested_action(text),
                confidence=_confidence(text),
                usage=getattr(answer, "usage", None),
            )
        except Exception as exc:  # noqa: BLE001 - reflection must never break the turn
            log.warning("reflection failed: %s", exc)
            return ReflectionResult(reflection="[reflection failed]", should_continue=True)
        self.thinking_manager.record_reflection(result)
        self.callbacks.fire("on_reflection", result)
        return result


def _confidence(text: str) -> float:
    match = _CONFIDENCE.search(text)
    if not match:
        return 0.7
    value = float(match.group(1))
    if match.group(2) or (value.is_integer() and 10 <= value <= 100):  # "85%" / "85" mean 0.85
        value /= 100.0
    return max(0.0, min(1.0, value))


def _suggested_action(text: str) -> str | None:
    match = _NEXT.search(text)
    return match.group(1).strip() if match else None
