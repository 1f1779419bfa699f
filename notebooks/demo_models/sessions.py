"""sessions.ipynb: a model that answers fiscal-quarter questions from the conversation
alone, so what it knows shows which history a session carries."""

from __future__ import annotations

import calendar
import re
from typing import Any

from jupyter_brain import ScriptedProvider

from ._base import pick

MONTHS = list(calendar.month_name)[1:]


def _fiscal_quarter(start: str, quarter: int) -> str:
    first = MONTHS.index(start) + 3 * (quarter - 1)
    names = [MONTHS[(first + i) % 12] for i in range(3)]
    return f"{names[0]}, {names[1]} and {names[2]}"


def _fiscal_bot(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    question = messages[-1]["content"]
    told = [re.search(r"fiscal year starts in (\w+)", m["content"]) for m in messages if m["role"] == "user"]
    starts = [found.group(1) for found in told if found]
    asked = re.search(r"Q([1-4])", question)
    thinking = ""
    if re.search(r"fiscal year starts in (\w+)", question):
        text = f"Noted: your fiscal year starts in {starts[-1]}, so fiscal Q1 is {_fiscal_quarter(starts[-1], 1)}."
    elif asked and starts:
        quarter = int(asked.group(1))
        thinking = f"The fiscal year starts in {starts[-1]}; Q{quarter} begins {3 * (quarter - 1)} months later."
        text = f"Fiscal Q{quarter} is {_fiscal_quarter(starts[-1], quarter)}."
    else:
        text = "I don't know when your fiscal year starts. Tell me (e.g. \"our fiscal year starts in April\")."
    if "## Thinking Instructions" not in messages[0]["content"]:
        thinking = ""  # at --think off the model is not asked to think
    # Scripted token counts: a fixed 1,200 for the system prompt and tools, plus the conversation.
    history_tokens = sum(len(str(m.get("content", ""))) for m in messages[1:]) // 4
    return {"text": text, "thinking": thinking,
            "usage": {"input_tokens": 1200 + history_tokens, "output_tokens": len(thinking + text) // 4}}


def fiscal_model() -> Any:
    """One model for every turn of the notebook (it repeats its one reply function)."""
    return pick(lambda: ScriptedProvider([_fiscal_bot], repeat=True))
