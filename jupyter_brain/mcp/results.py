"""An MCP ``CallToolResult`` as the text a tool returns to the model.

Text blocks verbatim, embedded text resources with their URI, links as a line. Images,
audio and binary resources are saved in the artifact store (a ``data:`` URI under the
handle, plus the decoded file beside it when the store is on disk) and the model reads a
short note; images are also attached to the result (``render_rich``), so a model that
takes images sees them (the provider decides: image blocks, image_url parts or a note). An error
result (``isError``) raises ``ToolError``, so the call ends as an error the model sees.
Large text needs nothing here: the executor moves it to the artifact store.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from typing import Any

from ..agent.artifacts import ArtifactStore
from ..agent.images import MEDIA_TYPES, ToolImage, ToolResult
from ..agent.tools import ToolError


def render_result(result: Any, artifacts: ArtifactStore) -> str:
    return render_rich(result, artifacts).text


def render_rich(result: Any, artifacts: ArtifactStore) -> ToolResult:
    """The result's text for the model, with its images attached."""
    blocks = getattr(result, "content", None) or []
    images = [ToolImage(b.mime_type, b.data) for b in blocks
              if getattr(b, "type", None) == "image" and getattr(b, "mime_type", None) in MEDIA_TYPES]
    parts = [_block_text(block, artifacts) for block in blocks]
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    text = "\n".join(p for p in parts if p)
    if getattr(result, "is_error", False):
        raise ToolError(text or "the MCP server reported an error without a message")
    return ToolResult(text, images)


def _block_text(block: Any, artifacts: ArtifactStore) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return save_media(block.data, block.mime_type, artifacts, kind)
    if kind == "resource":
        resource = block.resource
        uri = str(getattr(resource, "uri", ""))
        if getattr(resource, "text", None) is not None:
            return f"[resource {uri}]\n{resource.text}"
        mime = getattr(resource, "mime_type", None) or "application/octet-stream"
        return save_media(resource.blob, mime, artifacts, "resource", uri=uri)
    if kind == "resource_link":
        about = f" — {block.description}" if getattr(block, "description", None) else ""
        return f"[resource link: {block.name} {block.uri}{about}]"
    return f"[{kind or 'unknown'} content, not shown]"


def save_media(data: str, mime: str, artifacts: ArtifactStore, kind: str, *, uri: str = "") -> str:
    """Keep binary content as an artifact; the model gets a one-line note."""
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return f"[{kind} ({mime}) that was not valid base64; dropped]"
    prefix = "image" if mime.startswith("image/") else "media"
    handle = artifacts.put(f"data:{mime};base64,{data}", prefix=prefix)
    where = ""
    if artifacts.root is not None:
        suffix = mimetypes.guess_extension(mime.split(";")[0].strip()) or ".bin"
        path = artifacts.root / f"{handle}{suffix}"
        if not path.exists():
            path.write_bytes(raw)
        where = f", file {path.parent.name}/{path.name} in the data folder"
    label = "image" if prefix == "image" else kind
    source = f" {uri}" if uri else ""
    size = f"{len(raw) / 1024:.1f} KB" if len(raw) >= 1024 else f"{len(raw)} bytes"
    if prefix == "image" and mime in MEDIA_TYPES:
        return (f"[{label}{source}: {mime}, {size}, saved as artifact '{handle}'{where}; attached to this "
                "result as an image]")
    return (f"[{label}{source}: {mime}, {size}, saved as artifact '{handle}'{where}. It is not shown "
            "to the model; describe it from the other output or tell the user where it is.]")
