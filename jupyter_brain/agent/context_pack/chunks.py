"""Files as passages with anchors: ``path:line`` for text, ``name.ipynb#cell-3`` for notebooks.

Text is cut at natural boundaries (Markdown headings, top-level ``def``/``class``, blank
lines) into passages of at most ``CHUNK_LINES`` lines; a table gives only its head; a
notebook gives one passage per cell (numbered from 1, as ``read_file`` shows them). Long
lines and cells are clipped, so a minified file cannot flood a request.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from .scan import HEAD_ONLY_SUFFIXES

CHUNK_LINES = 40
CHUNK_CHARS = 1_500
LINE_CHARS = 400
CELL_CHARS = 2_000
TABLE_HEAD_LINES = 15
_BINARY_PROBE = 8_192

_MARKDOWN_HEADING = re.compile(r"^#{1,6}\s")
_PYTHON_TOP = re.compile(r"^(?:async\s+def|def|class)\s|^@")


@dataclass(frozen=True)
class Passage:
    anchor: str  # "src/a.py:10" or "nb.ipynb#cell-3"
    path: str  # the file, relative to the workspace
    text: str


def file_passages(path: Path, rel: str) -> list[Passage]:
    """The passages of one file ([] for a binary, unreadable or invalid one)."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".ipynb":
            return notebook_passages(path.read_bytes(), rel)
        if suffix in HEAD_ONLY_SUFFIXES:
            return _table_head(path, rel)
        data = path.read_bytes()
    except OSError:
        return []
    if b"\x00" in data[:_BINARY_PROBE]:
        return []
    return text_passages(data.decode("utf-8", errors="replace"), rel, suffix)


def text_passages(text: str, rel: str, suffix: str = "") -> list[Passage]:
    boundary = _MARKDOWN_HEADING if suffix in (".md", ".markdown") else _PYTHON_TOP if suffix in (".py", ".pyi") else None
    passages: list[Passage] = []
    chunk: list[str] = []
    start = 1
    size = 0

    def close() -> None:
        body = "\n".join(chunk).strip("\n")
        if body.strip():
            passages.append(Passage(f"{rel}:{start}", rel, body))

    for number, raw in enumerate(text.splitlines(), 1):
        line = _clip(raw.rstrip(), LINE_CHARS)
        filled = len(chunk) >= CHUNK_LINES or size + len(line) > CHUNK_CHARS
        at_boundary = (boundary is not None and boundary.match(line) is not None and len(chunk) >= 3) or (
            boundary is None and not line and len(chunk) >= CHUNK_LINES // 2)
        if chunk and (filled or at_boundary):
            close()
            chunk, size = [], 0
        if not chunk:
            if not line:  # a passage starts at its first non-blank line
                continue
            start = number
        chunk.append(line)
        size += len(line) + 1
    if chunk:
        close()
    return passages


def notebook_passages(data: bytes, rel: str) -> list[Passage]:
    """One passage per non-empty cell; [] for a file that is not a notebook."""
    try:
        cells = json.loads(data.decode("utf-8", errors="replace"))["cells"]
    except (ValueError, KeyError, TypeError):
        return []
    if not isinstance(cells, list):
        return []
    passages: list[Passage] = []
    for index, cell in enumerate(cells, 1):
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        text = "".join(map(str, source)) if isinstance(source, list) else str(source)
        if text.strip():
            passages.append(Passage(f"{rel}#cell-{index}", rel, _clip(text.strip(), CELL_CHARS)))
    return passages


def _table_head(path: Path, rel: str) -> list[Passage]:
    with open(path, encoding="utf-8", errors="replace") as handle:
        lines = [_clip(line.rstrip("\r\n"), LINE_CHARS) for line in islice(handle, TABLE_HEAD_LINES)]
    if "\x00" in "".join(lines) or not any(lines):
        return []
    return [Passage(f"{rel}:1", rel, "\n".join(lines))]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " …"
