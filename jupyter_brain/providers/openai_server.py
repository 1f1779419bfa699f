"""What differs between OpenAI-compatible servers, chosen from the URL or their answers.

Two behaviours a first session with a real server runs into:

- **reasoning echo.** DeepSeek's thinking mode requires ``reasoning_content`` on assistant
  messages that carry tool calls ("Missing `reasoning_content` field in the assistant
  message at message index 2", or "The reasoning_content in the thinking mode must be
  passed back to the API"); strict servers reject the unknown field. The default comes
  from the base URL (``api.deepseek.com``); a 400 that names ``reasoning_content`` moves
  it one way or the other, unless the user fixed it (``send_reasoning_content=``).
- **unserved model.** A model name the server does not serve is answered with a 404 (Ollama:
  ``model "x" not found``, vLLM: ``The model `x` does not exist``, OpenAI:
  ``model_not_found``); the error then lists the models the server does serve. The
  listing is asked for only after such an answer, never on every request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from jupyter_brain.providers.base import ProviderError
from jupyter_brain.providers.openai_wire import ReasoningEcho

_WANTS_FIELD = re.compile(r"missing|must|required|pass(?:ed)?\s+back", re.IGNORECASE)
_MODEL_NOT_FOUND = re.compile(
    r"model.{0,80}?(?:not[ _]found|does not exist|not exist|unknown|not served|no such)",
    re.IGNORECASE | re.DOTALL,
)
_NEXT_ECHO: dict[str, ReasoningEcho] = {"off": "tool_calls", "tool_calls": "all"}


def default_reasoning_echo(base_url: str | None, override: bool | None) -> ReasoningEcho:
    if override is not None:
        return "tool_calls" if override else "off"
    return "tool_calls" if base_url and "api.deepseek.com" in base_url else "off"


def learn_reasoning_echo(current: ReasoningEcho, error: ProviderError) -> ReasoningEcho | None:
    """The echo mode a 400 about ``reasoning_content`` asks for, or None if it says nothing.

    "missing" / "must be passed back" → send it (on more messages, if already sent);
    anything else naming the field (unknown, not permitted, extra) → stop sending it.
    """
    if error.status_code != 400 or "reasoning_content" not in error.message:
        return None
    if _WANTS_FIELD.search(error.message):
        return _NEXT_ECHO.get(current)
    return "off" if current != "off" else None


def is_model_not_found(error: ProviderError) -> bool:
    if error.status_code == 404 or "model_not_found" in error.message:
        return True
    return error.status_code == 400 and bool(_MODEL_NOT_FOUND.search(error.message))


def unserved_model_error(
    error: ProviderError, *, model: str, served: Sequence[str], base_url: str | None
) -> ProviderError:
    """The server's answer, plus what it does serve and how to pick one."""
    where = base_url or "the server"
    shown = ", ".join(served[:20]) + (f", … ({len(served)} in all)" if len(served) > 20 else "")
    return ProviderError(
        f"{where} does not serve the model {model!r} ({error.message}). It serves: {shown}. "
        "Pick one with model=... (or omit the model to use the first one listed).",
        kind="bad_request",
        status_code=error.status_code,
        provider=error.provider,
    )
