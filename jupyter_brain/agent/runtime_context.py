"""The text of the runtime and skill layers of a turn (``runtime_provider`` /
``runtime_model`` / ``runtime_environment``, ``skill_context``): short system messages
rendered fresh, never stored in the history.

The runtime layer tells the model what it cannot know by itself — which model answers,
today's date, the kernel's Python — so "today" and version questions are answered right.
The runtime integration (``agent/integrations/runtime``) adds them to the turn.
"""

from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Callable

MAX_SKILL_CHARS = 20_000


def runtime_text(provider: str, model: str, today: Callable[[], dt.date] = dt.date.today, *,
                 environment: bool = True) -> str:
    """One line of runtime metadata ("" when neither the provider nor the model is known).

    ``environment=False`` leaves out today's date and the kernel's Python: only which model
    answers, so the line is the same on every machine and every day."""
    if not (provider or model):
        return ""
    who = " via ".join(part for part in (model, provider) if part)
    if not environment:
        return f"Runtime: you are answering as {who}."
    python = f"Python {platform.python_version()} ({platform.python_implementation()}, {platform.system() or 'unknown OS'})"
    return (f"Runtime: you are answering as {who}. Today is {today().isoformat()}. "
            f"The user's Jupyter kernel runs {python}.")


def skill_text(skill: str | None) -> str:
    """The skill's instructions under a header ("" for none); a huge skill file is clipped."""
    body = (skill or "").strip()
    if not body:
        return ""
    if len(body) > MAX_SKILL_CHARS:
        body = body[:MAX_SKILL_CHARS] + f"\n[… skill clipped at {MAX_SKILL_CHARS:,} characters]"
    return f"Skill instructions for this turn (from the user's skill file):\n\n{body}"
