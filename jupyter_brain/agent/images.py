"""Images a tool hands back (a ``run_python`` figure, an MCP image): for the model and the view.

A tool returns ``ToolResult(text, images)`` instead of a string when it has images. The
model gets them on the neutral tool message (``"images": [{"media_type", "data"}]``, see
``providers.base``), where each provider decides how (image blocks, image_url parts, or a
note for models without vision). Views get them on ``ToolCallEnd.images`` as small data
URLs; an image too large for the widget's state goes by its artifact handle instead. The
artifact store is content-addressed, so the same figure is stored once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .artifacts import ArtifactStore

MAX_IMAGES_PER_RESULT = 4  # more would flood the model's context (each ~1,000 tokens)
VIEW_IMAGE_MAX_CHARS = 300_000  # a data URL larger than this goes to the view as a handle
MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


@dataclass(frozen=True)
class ToolImage:
    media_type: str
    data: str  # base64

    def as_dict(self) -> dict[str, str]:
        return {"media_type": self.media_type, "data": self.data}

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.data}"


@dataclass
class ToolResult:
    """A tool's answer with images: ``text`` is what the model reads, ``images`` it sees.

    ``outputs`` are rich display outputs for the views only (``ToolCallEnd.outputs``:
    ``{"mime_type", "data", "role"}`` dicts, already size-capped by the tool)."""

    text: str
    images: list[ToolImage] = field(default_factory=list)
    outputs: list[dict[str, str]] = field(default_factory=list)


def model_images(value: Any) -> list[dict[str, str]]:
    """The images of a tool's return value, as on the neutral tool message (bounded)."""
    if not isinstance(value, ToolResult):
        return []
    usable = [im for im in value.images if im.media_type in MEDIA_TYPES and im.data]
    return [im.as_dict() for im in usable[:MAX_IMAGES_PER_RESULT]]


def view_images(images: list[dict[str, str]], artifacts: ArtifactStore) -> list[str]:
    """What ``ToolCallEnd.images`` carries: small data URLs, else artifact handles."""
    shown = []
    for im in images:
        url = f"data:{im['media_type']};base64,{im['data']}"
        shown.append(url if len(url) <= VIEW_IMAGE_MAX_CHARS else artifacts.put(url, prefix="image"))
    return shown


DROPPED_IMAGE_NOTE = "[{n} image(s) of this result dropped from the history to save context]"


def drop_old_images(messages: list[dict[str, Any]]) -> int:
    """Drop the images of tool results older than the latest run of tool results, in
    place (each such message is replaced by a copy with a note); returns how many. The
    cheapest compaction: the model saw them when they were new."""
    last_run = len(messages)
    while last_run > 0 and messages[last_run - 1].get("role") == "tool":
        last_run -= 1
    dropped = 0
    for i, message in enumerate(messages[:last_run]):
        images = message.get("images") if message.get("role") == "tool" else None
        if images:
            note = DROPPED_IMAGE_NOTE.format(n=len(images))
            content = str(message.get("content") or "")
            messages[i] = {**{k: v for k, v in message.items() if k != "images"},
                           "content": f"{content}\n{note}" if content else note}
            dropped += len(images)
    return dropped
