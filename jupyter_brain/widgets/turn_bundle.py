"""A finished turn as one output bundle, so a saved notebook carries no widget code.

A live ``AgentView`` is an anywidget: its model state holds the view's whole JS and CSS
(~210 KB), and nbclient, papermill and JupyterLab's "Save widget state" copy that state
into the notebook once per view. Once a turn is final nothing in it changes any more, so
the cell's output becomes plain data instead (issue #24, section 4):

* ``application/vnd.jupyter-brain.turn+json`` — the compact transcript, which the
  JupyterLab extension draws with the same renderer as the live view;
* ``text/markdown`` — the transcript as Markdown, what VS Code, nbviewer, GitHub and
  ``nbconvert`` show where the extension is absent;
* ``text/plain`` — one line.

A figure is stored once: its base64 lives in the Markdown (the fallback needs it), and
the JSON entry names it by position instead of copying it — a figure of ``images`` becomes
the string ``markdown-image:N``, an image of ``outputs`` gets ``"data": ""`` and
``"markdown_image": N`` (N counts the Markdown's inline images from 0).
"""

from __future__ import annotations

import re
from typing import Any

from ._fold import Entry

__all__ = ["IMAGE_REF", "TURN_BUNDLE_VERSION", "TURN_MIME", "markdown_images", "turn_bundle"]

TURN_MIME = "application/vnd.jupyter-brain.turn+json"
TURN_BUNDLE_VERSION = 1
IMAGE_REF = "markdown-image:"
_DATA_URL = re.compile(r"data:(image/(?:png|jpeg));base64,([A-Za-z0-9+/=]+)")
# Written by ``_answer.outputs_markdown``; the lab extension reads them back with the same
# pattern (js/src/turn_bundle.ts).
_IMAGE = re.compile(r"!\[[^\]]*\]\(data:(image/(?:png|jpeg));base64,([A-Za-z0-9+/=]+)\)")


def markdown_images(markdown: str) -> list[tuple[str, str]]:
    """The inline images of a transcript, in order: ``(mime_type, base64)``."""
    return [(m.group(1), m.group(2)) for m in _IMAGE.finditer(markdown)]


def _without_copies(entries: list[Entry], images: dict[tuple[str, str], int]) -> list[Entry]:
    """Entries whose image outputs found in the Markdown point there instead of holding
    the bytes again (an image the Markdown lacks keeps its bytes)."""
    out: list[Entry] = []
    for entry in entries:
        if not entry.get("outputs") and not entry.get("images"):
            out.append(entry)
            continue
        slim = dict(entry)
        if entry.get("images"):
            slim["images"] = [_image_ref(str(url), images) for url in entry["images"]]
        if entry.get("outputs"):
            slim["outputs"] = [_output_ref(item, images) for item in entry["outputs"]]
        out.append(slim)
    return out


def _image_ref(url: str, images: dict[tuple[str, str], int]) -> str:
    match = _DATA_URL.fullmatch(url)
    index = images.get((match.group(1), match.group(2))) if match else None
    return url if index is None else f"{IMAGE_REF}{index}"


def _output_ref(item: dict[str, Any], images: dict[tuple[str, str], int]) -> dict[str, Any]:
    key = (str(item.get("mime_type", "")), "".join(str(item.get("data", "")).split()))
    index = images.get(key)
    return item if index is None else {**item, "data": "", "markdown_image": index}


def turn_bundle(
    entries: list[Entry], markdown: str, *, fold: str, header: dict[str, Any], plain: str
) -> dict[str, Any]:
    """The output bundle of a finished turn (``markdown`` as the fallback shows it)."""
    images = {image: index for index, image in reversed(list(enumerate(markdown_images(markdown))))}
    data: dict[str, Any] = {
        TURN_MIME: {
            "version": TURN_BUNDLE_VERSION,
            "fold": fold,
            **header,
            "transcript": _without_copies(entries, images),
        },
        "text/plain": plain,
    }
    if markdown:
        data["text/markdown"] = markdown
    return data
