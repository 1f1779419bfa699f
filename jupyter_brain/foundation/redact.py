"""Masking secrets (API keys, bearer tokens) in anything that is logged or displayed."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

# Key prefixes must start a token: "task-force-management-plan" holds no "sk-" key. The
# check comes after the prefix (``sk-(?<![A-Za-z0-9]sk-)`` = "no letter or digit before the
# s"), so each pattern starts with a literal the regex engine can scan for: every logged
# event is redacted, and a leading look-behind made each search ~200x slower.
_PREFIXED = [
    re.compile(r"sk-ant-(?<![A-Za-z0-9]sk-ant-)[A-Za-z0-9_\-]{8,}"),  # Anthropic
    re.compile(r"sk-(?<![A-Za-z0-9]sk-)(?:proj-|svcacct-)?[A-Za-z0-9_\-]{16,}"),  # OpenAI
    re.compile(r"gh[pousr]_(?<![A-Za-z0-9]gh[pousr]_)[A-Za-z0-9]{20,}"),  # GitHub
    re.compile(r"hf_(?<![A-Za-z0-9]hf_)[A-Za-z0-9]{20,}"),  # Hugging Face
    re.compile(r"AKIA(?<![A-Za-z0-9]AKIA)[0-9A-Z]{16}"),  # AWS access key id
]
# Case-insensitive, keeping what precedes the value (group 1); each runs only when one of
# its words is in the text at all (a plain substring test on the lower-cased text).
_LABELLED = [
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-+/=]{12,}"), ("bearer",)),
    (re.compile(r"(?i)((?:api[_-]?key|x-api-key|authorization|token|secret)[\"']?\s*[:=]\s*[\"']?)"
                r"[A-Za-z0-9._\-+/=]{12,}"), ("key", "authorization", "token", "secret")),
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
        for pattern in _PREFIXED:
            text = pattern.sub(MASK, text)
        lowered = text.lower()
        for pattern, words in _LABELLED:
            if any(word in lowered for word in words):
                text = pattern.sub(lambda m: m.group(1) + MASK, text)
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
