"""How a turn that did not simply answer says so: the stop message, a refusal as the
answer, and the note left for a tool call the turn could not finish."""

from __future__ import annotations

from ...providers.base import ProviderResult
from ..harness_settings import HarnessSettings

INTERRUPTED_TOOL_NOTE = "[not run: the turn was interrupted before this tool finished]"
REFUSAL_NOTE = "The model declined to answer."


def explain_stop(status: str, settings: HarnessSettings, error: str) -> str:
    """The explicit final message of a turn that ended with ``status`` instead of an answer
    (``error``: the masked error, for a turn that failed)."""
    s = settings
    if status == "max_steps":
        why = (f"I stopped after {s.max_steps} steps, the step limit for this turn, before reaching a "
               "final answer. The history is kept: continue in a new cell, or allow more steps "
               "(--max-steps).")
    elif status == "timeout":
        why = (f"I stopped because the turn reached its {s.timeout_s:g}s time limit before a final "
               "answer. The history is kept: continue in a new cell, or allow more time (--timeout).")
    elif status == "strategy_limit":
        strategy = s.reasoning_strategy
        name = strategy.name if strategy else "strategy"
        why = (f"I stopped because the {name} strategy reached its own step or reflection limit. "
               "The history is kept: continue in a new cell.")
    elif status == "interrupted":
        why = "The turn was interrupted. The history is kept and the session is ready for the next cell."
    else:
        why = (f"The turn stopped because of an error: {sentence(error)} "
               "The history is kept and the session is ready for the next cell.")
    return f"[{why}]"


def refusal_answer(result: ProviderResult) -> ProviderResult:
    """A refusal as the turn's answer: its reason (or a short note) after what streamed;
    no tool calls (none runs on a refusal), so the history ends with this message."""
    reason = (result.refusal or "").strip() or REFUSAL_NOTE
    text = result.text if reason in result.text else join(result.text.strip(), reason)
    return result.model_copy(update={"text": text, "tool_calls": [], "refusal": reason})


def sentence(text: str) -> str:
    """``text`` ending in one full stop: an SDK's message often has its own ("Connection error.")."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?", "…")) else f"{text}."


def join(a: str, b: str) -> str:
    return f"{a}\n\n{b}" if a else b
