"""``{name}`` in an ``%%agent`` prompt becomes the value of a kernel variable.

Only bare names and ``In[n]`` / ``Out[n]`` are replaced — never arbitrary expressions,
and never via ``str.format`` (prompts are full of JSON and code braces). Unknown names
stay exactly as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)(?:\[(-?\d+)\])?\}(?!\})")
MAX_VALUE_CHARS = 4_000


def interpolate(prompt: str, namespace: Mapping[str, Any], *, limit: int = MAX_VALUE_CHARS) -> str:
    def replace(match: re.Match[str]) -> str:
        name, index = match.group(1), match.group(2)
        if name not in namespace:
            return match.group(0)
        value = namespace[name]
        if index is not None:
            try:
                value = value[int(index)]
            except (KeyError, IndexError, TypeError, ValueError):
                return match.group(0)
        text = value if isinstance(value, str) else repr(value)
        if len(text) > limit:
            text = text[:limit] + f"… ({len(text) - limit:,} more characters)"
        return text

    return _PLACEHOLDER.sub(replace, prompt)
