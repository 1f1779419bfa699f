"""The server's notebooks, read and edited through its contents manager.

Every path an agent names is checked before the contents manager sees it: relative to the
server's root, no ``..``, not absolute, and (symlinks followed) still inside the root
(``tools/paths.WorkspaceRoot``, the in-kernel agent's rule). Edits of one notebook are
serialised by a lock per path, so two clients' edits both land: read, change, validate, save.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path, PurePosixPath
from typing import Any

import nbformat
from jupyter_core.utils import ensure_async

from jupyter_brain.agent.tools import ToolError
from jupyter_brain.tools.paths import WorkspaceRoot

from .errors import ToolProblem

SKIPPED_FOLDERS = {"node_modules", "__pycache__", ".git", ".venv", "venv", ".ipynb_checkpoints", "site-packages"}
MAX_LISTED = 500


class NotebookStore:
    """Notebooks under the server's root: checked paths, locked edits, saved files."""

    def __init__(self, contents_manager: Any, root_dir: str | Path) -> None:
        self.contents = contents_manager
        self.root = WorkspaceRoot(root_dir)
        self._locks: dict[str, asyncio.Lock] = {}
        self._saved: dict[str, tuple[tuple[int, int], nbformat.NotebookNode]] = {}  # what we last saved, by stat

    # paths -------------------------------------------------------------------
    def api_path(self, path: str, *, notebook: bool = True) -> str:
        """``path`` as the contents manager's API path, once it is known to stay inside the root."""
        if not isinstance(path, str) or not path.strip():
            raise ToolProblem("path is empty: give a notebook path relative to the server's root, such as 'analysis.ipynb'")
        text = path.strip().replace("\\", "/")
        if PurePosixPath(text).is_absolute() or (len(text) > 1 and text[1] == ":"):
            raise ToolProblem(f"Refused path {path!r}: absolute paths are not accepted; use a path relative to "
                              "the server's root, such as 'analysis.ipynb'")
        try:
            real = self.root.resolve(text)
        except ToolError as exc:
            raise ToolProblem(str(exc).replace("workspace root", "server root")) from None
        if notebook and real.suffix != ".ipynb":
            raise ToolProblem(f"{path!r} is not a notebook: the path must end in .ipynb")
        return self.root.relative(real)

    def real_path(self, api_path: str) -> Path:
        return self.root.root / api_path

    def lock(self, api_path: str) -> asyncio.Lock:
        return self._locks.setdefault(api_path, asyncio.Lock())

    # reading -----------------------------------------------------------------
    async def exists(self, api_path: str) -> bool:
        return bool(await ensure_async(self.contents.file_exists(api_path)))

    async def read(self, api_path: str) -> nbformat.NotebookNode:
        """The saved notebook, read under its lock: the contents manager writes a notebook in
        place, so a read beside a save could see half a file."""
        async with self.lock(api_path):
            return await self._read(api_path)

    async def _read(self, api_path: str) -> nbformat.NotebookNode:
        """The notebook; the copy we saved last when the file has not changed since (same
        mtime and size): the contents manager's read and validation cost tens of ms a call."""
        kept = self._saved.get(api_path)
        if kept is not None and kept[0] == self._stamp(api_path):
            return kept[1]
        self._saved.pop(api_path, None)
        if not await self.exists(api_path):
            raise ToolProblem(f"No notebook {api_path!r} under the server's root (list_notebooks shows what there is)")
        try:
            model = await ensure_async(self.contents.get(api_path, content=True, type="notebook"))
        except Exception as exc:  # noqa: BLE001 - the contents manager raises HTTP errors; the agent gets one line
            raise ToolProblem(f"Cannot read {api_path!r}: {getattr(exc, 'log_message', None) or exc}") from None
        return model["content"]

    def list(self, folder: str = "") -> list[str]:
        """Every notebook under ``folder`` (hidden and environment folders skipped), sorted."""
        start = self.root.root / self.api_path(folder, notebook=False) if folder else self.root.root
        if not start.is_dir():
            raise ToolProblem(f"No folder {folder!r} under the server's root")
        found: list[str] = []
        for here, dirs, files in os.walk(start):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
            for name in sorted(files):
                if name.endswith(".ipynb") and not name.startswith("."):
                    found.append(self.root.relative(Path(here) / name))
                    if len(found) >= MAX_LISTED:
                        return found
        return found

    # writing -----------------------------------------------------------------
    @asynccontextmanager
    async def editing(self, api_path: str) -> AsyncIterator[nbformat.NotebookNode]:
        """The notebook to change in place; saved (after validation) when the block ends
        without an exception. Held under the notebook's lock throughout."""
        async with self.lock(api_path):
            nb = await self._read(api_path)
            self._saved.pop(api_path, None)  # changed in place below: kept again only once saved
            yield nb
            await self.save(api_path, nb)

    async def save(self, api_path: str, nb: nbformat.NotebookNode) -> None:
        try:
            _validator(nb).validate(nb)
        except nbformat.ValidationError as exc:
            raise ToolProblem(f"The edit would leave {api_path!r} invalid, so it was not saved: {exc.message}") from None
        await ensure_async(self.contents.save({"type": "notebook", "format": "json", "content": nb}, api_path))
        stamp = self._stamp(api_path)
        if stamp is not None:
            self._saved[api_path] = (stamp, nb)

    def _stamp(self, api_path: str) -> tuple[int, int] | None:
        try:
            stat = os.stat(self.real_path(api_path))
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    async def create(self, api_path: str, kernel_name: str, display_name: str, language: str) -> None:
        async with self.lock(api_path):
            if await self.exists(api_path):
                raise ToolProblem(f"{api_path!r} exists already: read_notebook reads it, or choose another name")
            parent = self.real_path(api_path).parent
            if not parent.is_dir():
                raise ToolProblem(f"No folder {str(PurePosixPath(api_path).parent)!r} under the server's root")
            nb = nbformat.v4.new_notebook()
            nb.metadata["kernelspec"] = {"name": kernel_name, "display_name": display_name, "language": language}
            nb.metadata["language_info"] = {"name": language}
            await self.save(api_path, nb)


def _validator(nb: nbformat.NotebookNode) -> Any:
    """nbformat's fastjsonschema validator when installed (ten times faster), else its default."""
    from nbformat.validator import get_validator

    minor = nb.get("nbformat_minor", nbformat.v4.nbformat_minor)
    try:
        return get_validator(version=4, version_minor=minor, name="fastjsonschema")
    except (ImportError, ValueError):
        return get_validator(version=4, version_minor=minor)


def cell_position(nb: nbformat.NotebookNode, index: int | None, cell_id: str | None, *, inserting: bool = False) -> int:
    """The position ``index`` or ``cell_id`` names (``-1``: the last cell, or the end when inserting)."""
    count = len(nb.cells)
    if cell_id:
        for i, cell in enumerate(nb.cells):
            if cell.get("id") == cell_id:
                return i + 1 if inserting else i
        raise ToolProblem(f"No cell with id {cell_id!r} (read_notebook shows each cell's id)")
    if index is None:
        if inserting:
            return count
        raise ToolProblem("Name the cell: give index (0-based; -1 is the last) or cell_id")
    if inserting:
        if index == -1:
            return count
        if 0 <= index <= count:
            return index
        raise ToolProblem(f"index {index} is out of range: this notebook has {count} cells, so insert at 0 to {count}"
                          " (or -1 to append)")
    if index == -1 and count:
        return count - 1
    if 0 <= index < count:
        return index
    if not count:
        raise ToolProblem("index out of range: this notebook has no cells")
    raise ToolProblem(f"index {index} is out of range: this notebook has {count} cells (0 to {count - 1}, or -1)")
