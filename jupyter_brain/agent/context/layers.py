"""Context layers: parts of a request rendered fresh for it and never stored in history.

The workspace is the first such layer; a turn adds others (memories it recalled, the
context pack of workspace passages, runtime metadata, a skill). Each renders when a
request is built, so the history only ever holds the conversation itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Message = dict[str, Any]


@dataclass(frozen=True)
class ContextLayer:
    """One fresh part of the request: ``kind`` is one of the providers'
    ``FRESH_CONTEXT_KINDS``; ``render`` returns its text ("" leaves it out)."""

    kind: str
    render: Callable[[], str]

    @classmethod
    def fixed(cls, kind: str, text: str) -> ContextLayer:
        return cls(kind, lambda: text)


def render_layers(layers: Sequence[ContextLayer]) -> list[Message]:
    """The layers as system messages; a layer that fails says so instead of stopping the turn."""
    rendered: list[Message] = []
    for layer in layers:
        try:
            text = layer.render()
        except Exception as exc:  # noqa: BLE001 - a broken layer must not stop the turn
            text = f"({layer.kind} context unavailable: {exc})"
        if text:
            rendered.append({"role": "system", "content": text, "kind": layer.kind})
    return rendered
