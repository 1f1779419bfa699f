"""Cells and their outputs as an agent should read them: lean text, figures as images.

Text and tables are text (a DataFrame's plain-text form, not its HTML); a figure is an image,
downscaled so its longer side is ``image_max_px`` (when Pillow is there) and counted against
the result's image budget; a long output is cut with a note saying how much was left out.
Nothing here knows of HTTP or MCP: a result is ``Rendered(text, images)``.
"""

from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass, field
from typing import Any

from jupyter_brain.agent.images import ToolImage
from jupyter_brain.agent.redact import Redactor

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
TEXT_TYPES = ("text/plain", "text/markdown", "text/latex", "application/json")
TRACEBACK_LINES = 12
CELL_FORMAT = "each cell: [index id, its type unless code], its source, then → each output"


@dataclass(frozen=True)
class RenderLimits:
    max_output_chars: int = 6_000
    max_result_bytes: int = 200_000
    image_max_px: int = 768
    max_images: int = 6


@dataclass
class Rendered:
    text: str
    images: list[ToolImage] = field(default_factory=list)


class Renderer:
    """One tool result's rendering: the image budget is shared by every cell it renders."""

    def __init__(self, limits: RenderLimits, redact: Redactor | None = None) -> None:
        self.limits = limits
        self.redact = redact or Redactor()
        self.images: list[ToolImage] = []
        self.images_left_out = 0

    # cells --------------------------------------------------------------------
    def cell(self, index: int, cell: Any, *, outputs: bool = True, max_chars: int | None = None) -> str:
        kind = cell.get("cell_type", "code")
        # index and id, what an edit names; the type when not code (read_notebook's CELL_FORMAT says so once)
        head = f"[{index} {cell.get('id', '?')}" + ("]" if kind == "code" else f" {kind}]")
        provenance = (cell.get("metadata", {}).get("jupyter_brain") or {}).get("provenance")
        if provenance:
            head += f" (by {provenance.get('client', 'an agent')})"
        parts = [head, self.redact(_source(cell)) if _source(cell) else "(empty)"]
        if outputs and kind == "code":
            parts.extend(self.outputs(cell.get("outputs", []), max_chars=max_chars))
        return "\n".join(parts)

    def outputs(self, outputs: list[Any], *, max_chars: int | None = None) -> list[str]:
        limit = max_chars or self.limits.max_output_chars
        lines = []
        for output in outputs:
            shown = self.output(output, limit)
            if shown:
                lines.append(shown)
        return lines

    def output(self, output: Any, limit: int) -> str:
        kind = output.get("output_type")
        if kind == "stream":
            prefix = "[stderr] " if output.get("name") == "stderr" else ""
            return "→ " + prefix + cut(self.redact(ANSI.sub("", _text(output.get("text", "")))), limit)
        if kind == "error":
            trace = [ANSI.sub("", line) for line in output.get("traceback", [])]
            tail = "\n".join(trace[-TRACEBACK_LINES:]) if trace else ""
            head = f"→ error {output.get('ename', '')}: {output.get('evalue', '')}"
            return cut(self.redact(head + ("\n" + tail if tail else "")), limit)
        if kind in ("execute_result", "display_data"):
            return self.mime_bundle(output.get("data", {}), limit)
        return ""

    def mime_bundle(self, data: dict[str, Any], limit: int) -> str:
        image_type = next((t for t in IMAGE_TYPES if t in data), None)
        if image_type is not None:
            return self.image(image_type, _text(data[image_type]), data)
        for mime in TEXT_TYPES:
            if mime in data:
                return "→ " + cut(self.redact(ANSI.sub("", _text(data[mime]))), limit)
        if "text/html" in data:
            return "→ " + cut(self.redact(_html_text(_text(data["text/html"]))), limit)
        kinds = ", ".join(sorted(data)) or "nothing"
        return f"→ [an output of {kinds} that has no text form]"

    def image(self, media_type: str, b64: str, data: dict[str, Any]) -> str:
        alt = _text(data.get("text/plain", "")).strip()
        if len(self.images) >= self.limits.max_images:
            self.images_left_out += 1
            return f"→ [figure not attached: this result's {self.limits.max_images} images are used; read_cell shows it]"
        image = downscale(ToolImage(media_type, b64.strip()), self.limits.image_max_px)
        self.images.append(image)
        label = f" {alt}" if alt and not alt.startswith("<Figure") else ""
        return f"→ [figure {len(self.images)} attached as an image{label}]"

    # the whole result -----------------------------------------------------------
    def result(self, text: str) -> Rendered:
        """``text`` and the images gathered, within ``max_result_bytes`` (images go first)."""
        budget = self.limits.max_result_bytes
        images: list[ToolImage] = []
        dropped = 0
        for image in self.images:
            size = len(image.data)
            if size <= budget - len(text.encode()) // 2:
                images.append(image)
                budget -= size
            else:
                dropped += 1
        if dropped:
            text += f"\n[{dropped} figure(s) left out: over the {self.limits.max_result_bytes:,}-byte limit of one result]"
        encoded = text.encode()
        if len(encoded) > budget:
            kept = encoded[: max(budget - 200, 0)].decode("utf-8", "ignore")
            text = kept + (f"\n… [cut: {len(encoded) - len(kept.encode()):,} more bytes; read fewer cells at a time "
                           "(start, count) or one with read_cell]")
        return Rendered(text, images)


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: its head and tail, and a note of what was left out."""
    text = text.rstrip("\n")
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3):]
    left = len(text) - len(head) - len(tail)
    lines = text.count("\n", len(head), len(text) - len(tail))
    return f"{head}\n… [{left:,} characters ({lines} lines) left out; read_cell with a larger max_chars shows more] …\n{tail}"


def downscale(image: ToolImage, max_px: int) -> ToolImage:
    """The image with its longer side at most ``max_px`` (PNG), when Pillow can read it."""
    try:
        from PIL import Image  # optional: matplotlib brings it; without it images go as they are
    except ImportError:
        return image
    try:
        raw = base64.b64decode(image.data)
        with Image.open(io.BytesIO(raw)) as picture:
            if max(picture.size) <= max_px:
                return image
            picture.thumbnail((max_px, max_px))
            buffer = io.BytesIO()
            picture.save(buffer, format="PNG", optimize=True)
        return ToolImage("image/png", base64.b64encode(buffer.getvalue()).decode("ascii"))
    except Exception:  # noqa: BLE001 - a figure Pillow cannot read goes as it is
        return image


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _source(cell: Any) -> str:
    return _text(cell.get("source", ""))


_TAG = re.compile(r"<[^>]+>")
_CELL_END = re.compile(r"</t[dh]>\s*", re.I)
_ROW_END = re.compile(r"</tr>\s*", re.I)


def _html_text(html: str) -> str:
    """HTML with no plain-text form, as text: table cells split by ' | ', rows by lines."""
    text = _ROW_END.sub("\n", _CELL_END.sub(" | ", html))
    text = _TAG.sub("", text)
    text = text.replace("&nbsp;", " ").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())
