"""ArtifactStore: where tool output too large for the context goes.

The model gets a preview and a handle; the full text stays on disk (or in memory) and
can be paged through with the ``read_artifact`` tool. What it keeps is masked first
(``redact``): the folder sits in the data dir, beside a notebook people share (#39).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .redact import Redactor
from .tools import ToolError, ToolSpec, tool

TOOL_MESSAGE_MAX_CHARS = 12_000
PREVIEW_CHARS = 2_000


class ArtifactStore:
    def __init__(self, root: str | Path | None = None, redact: Callable[[str], str] | None = None) -> None:
        self.root = Path(root) if root is not None else None
        self.redact = redact or Redactor()
        self._memory: dict[str, str] = {}
        self._lock = threading.Lock()

    def put(self, text: str, *, prefix: str = "art") -> str:
        text = self.redact(text)
        digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]
        handle = f"{prefix}_{digest}"
        with self._lock:
            if self.root is not None:
                self.root.mkdir(parents=True, exist_ok=True)
                path = self.root / f"{handle}.txt"
                if not path.exists():
                    path.write_text(text, encoding="utf-8")
            else:
                self._memory[handle] = text
        return handle

    def get(self, handle: str) -> str:
        if not handle.replace("_", "").isalnum():
            raise KeyError(f"not an artifact handle: {handle!r}")
        with self._lock:
            if handle in self._memory:
                return self._memory[handle]
            if self.root is not None:
                path = self.root / f"{handle}.txt"
                if path.exists():
                    return path.read_text(encoding="utf-8")
        raise KeyError(f"no artifact {handle!r}")

    def offload(self, text: str, limit: int = TOOL_MESSAGE_MAX_CHARS) -> tuple[str, str | None]:
        """Return (what the model sees, handle or None). Small output passes unchanged."""
        if len(text) <= limit:
            return text, None
        handle = self.put(text)
        preview = text[:PREVIEW_CHARS]
        note = (
            f"\n\n[Output truncated: {len(text):,} characters in total. The full output is "
            f"stored as artifact '{handle}'; call read_artifact(handle='{handle}', offset=..., "
            f"length=...) to read more.]"
        )
        return preview + note, handle


def _read_part(store: ArtifactStore, handle: str, offset: int, length: int) -> str:
    try:
        text = store.get(handle)
    except KeyError as exc:
        raise ToolError(str(exc)) from None
    offset = max(0, offset)  # a negative offset would slice from the end and misreport the rest
    length = max(1, min(length, 10_000))
    part = text[offset : offset + length]
    rest = len(text) - (offset + len(part))
    suffix = f"\n[{rest:,} more characters after offset {offset + len(part)}]" if rest > 0 else ""
    return part + suffix


# Built once: its argument model and schema are the same for every store. Inline: a dict
# lookup or a local file read, fast and unable to block, so no hand-off to a worker thread.
@tool(name="read_artifact", inline=True)
def _read_artifact(handle: str, offset: int = 0, length: int = 8000) -> str:
    """Read more of a truncated tool output.

    Args:
        handle: the artifact handle it names.
        offset: first character.
        length: characters (at most 10000).
    """
    raise NotImplementedError("bound to a store by artifact_tool()")


def artifact_tool(store: ArtifactStore) -> ToolSpec:
    """The read-only tool that pages through stored artifacts."""

    def read_artifact(handle: str, offset: int = 0, length: int = 8000) -> str:
        return _read_part(store, handle, offset, length)

    return replace(_read_artifact, fn=read_artifact, metadata=dict(_read_artifact.metadata))
