"""Masking secrets (API keys, bearer tokens) in anything that is logged or displayed."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

# Key prefixes must start a token: "task-force-management-plan" holds no "sk-" key.
_START = r"(?<![A-Za-z0-9])"
_PATTERNS = [
    re.compile(_START + r"sk-ant-[A-Za-z0-9_\-]{8,}"),  # Anthropic
    re.compile(_START + r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{16,}"),  # OpenAI
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-+/=]{12,}"),
    re.compile(r"(?i)((?:api[_-]?key|x-api-key|authorization|token|secret)[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9._\-+/=]{12,}"),
    re.compile(_START + r"gh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub
    re.compile(_START + r"hf_[A-Za-z0-9]{20,}"),  # Hugging Face
    re.compile(_START + r"AKIA[0-9A-Z]{16}"),  # AWS access key id
]
_ENV_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "JUPYTER_BRAIN_API_KEY")
MASK = "[REDACTED]"


class Redactor:
    """Callable str -> str. Known key formats plus the exact values of configured keys."""

    def __init__(self, secrets: Iterable[str] = (), *, include_env: bool = True) -> None:
        values = {s for s in secrets if s and len(s) >= 8}
        if include_env:
            values |= {os.environ[k] for k in _ENV_KEYS if len(os.environ.get(k, "")) >= 8}
        self._values = sorted(values, key=len, reverse=True)

    def add(self, secret: str) -> None:
        if secret and len(secret) >= 8 and secret not in self._values:
            self._values.append(secret)
            self._values.sort(key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        for pattern in _PATTERNS:
            if pattern.groups:
                text = pattern.sub(lambda m: m.group(1) + MASK, text)
            else:
                text = pattern.sub(MASK, text)
        return text


def redact(text: str) -> str:
    return Redactor()(text)


def redact_value(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` (str, or dicts/lists of them) with secrets masked; the very same object
    when nothing needed masking, so callers can skip copies."""
    if isinstance(value, str):
        masked = redact(value)
        return value if masked == value else masked
    if isinstance(value, dict):
        out = {k: redact_value(v, redact) for k, v in value.items()}
        return value if all(out[k] is value[k] for k in value) else out
    if isinstance(value, (list, tuple)):
        items = [redact_value(v, redact) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else type(value)(items)
    return value
