"""The folder chain a notebook's conventions are read from: its folder, then each parent
up to the repository root (the nearest folder holding ``.git``) or, outside a repository,
up to the home folder. A folder outside both is read alone: a notebook in ``/tmp`` never
picks up ``/AGENTS.md``."""

from __future__ import annotations

from pathlib import Path


def folder_chain(start: str | Path, home: str | Path | None = None) -> list[Path]:
    """``start`` and its parents, nearest first, ending at the repository root or ``home``."""
    here = Path(start).expanduser().resolve()
    home_dir = Path(home).expanduser().resolve() if home is not None else home_folder()
    chain: list[Path] = []
    for folder in (here, *here.parents):
        chain.append(folder)
        if (folder / ".git").exists():
            return chain
        if home_dir is not None and folder == home_dir:
            return chain
    # neither a repository nor the home folder above: the notebook's own folder only
    return [here]


def home_folder() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, OSError):
        return None


def shown_path(path: Path, chain: list[Path], home: str | Path | None = None) -> str:
    """``path`` as a person (and the model) reads it: relative to the notebook's folder when
    it is on the folder ``chain`` (``../.agents/skills/x``), ``~/…`` under the home folder,
    else absolute. The same on every machine that checks the project out."""
    home_dir = Path(home).expanduser().resolve() if home is not None else home_folder()
    for depth, folder in enumerate(chain):
        if folder == home_dir:
            break  # the home folder's own conventions read as ~/…
        if path == folder or path.is_relative_to(folder):
            rel = path.relative_to(folder).as_posix()
            parts = [*([".."] * depth), *([rel] if rel != "." else [])]
            return "/".join(parts) or "."
    if home_dir is not None and path.is_relative_to(home_dir):
        return "~/" + path.relative_to(home_dir).as_posix()
    return str(path)
