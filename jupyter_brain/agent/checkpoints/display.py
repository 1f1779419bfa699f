"""Showing a checkpointed path the way the user knows it: relative to the project folder."""

from __future__ import annotations

from pathlib import Path


def display_path(path: str, root: str | Path | None = None) -> str:
    """``path`` relative to ``root`` when it lies inside it, else as it is."""
    if root:
        try:
            return Path(path).relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            pass
    return str(path)
