"""The server's notebooks, read and edited through its contents manager.

Every path an agent names is checked before the contents manager sees it: relative to the
server's root, no ``..``, not absolute, and (symlinks followed) still inside the root
(``tools/paths.WorkspaceRoot``, the in-kernel agent's rule). Edits of one notebook are
serialised by a lock per path, so two clients' edits both land.

The notebook we hold is authoritative: an edit changes it and is answered at once; the file
is saved a moment later (the contents manager's save, with its validation, signing and
fsync, costs tens of ms), one save for a burst. Unsaved edits are written before anyone
opens the notebook through the server (its ``get``), when an MCP session ends, and at
shutdown; a file changed by someone else before our save is read again and our edits
applied on top, so neither side's change is lost.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import nbformat
from jupyter_core.utils import ensure_async

from jupyter_brain.agent.tools import ToolError
from jupyter_brain.tools.paths import WorkspaceRoot

from .errors import ToolProblem

log = logging.getLogger("jupyter_brain.server")
_UNSET = object()
# Set while we save: the contents manager's own reads inside its save must not wait for our lock.
_IN_OUR_SAVE: contextvars.ContextVar[bool] = contextvars.ContextVar("jupyter_brain_in_our_save", default=False)
T = TypeVar("T")
Change = Callable[[nbformat.NotebookNode], T]
SAVE_DELAY_S = 0.2  # a burst of edits is saved once, this long after its last edit …
SAVE_MAX_DELAY_S = 1.0  # … and never later than this after its first

SKIPPED_FOLDERS = {"node_modules", "__pycache__", ".git", ".venv", "venv", ".ipynb_checkpoints", "site-packages"}
MAX_LISTED = 500


class NotebookStore:
    """Notebooks under the server's root: checked paths, locked edits, saves after the answer."""

    def __init__(self, contents_manager: Any, root_dir: str | Path) -> None:
        """``contents_manager``: the server's, or a function returning it. A function, because an
        extension loaded after ours may replace it (jupytext does): the one in use is asked for at
        each call, and wrapped the first time it is seen."""
        self._contents_of = contents_manager if callable(contents_manager) else (lambda: contents_manager)
        self.root = WorkspaceRoot(root_dir)
        self._locks: dict[str, asyncio.Lock] = {}
        self._held: dict[str, _Held] = {}
        self._tasks: set[asyncio.Future[None]] = set()
        self._manager: Any = _UNSET
        self._get: Any = None
        self._deferred = False

    @property
    def contents(self) -> Any:
        manager = self._contents_of()
        if manager is not self._manager:
            self._manager, self._get = manager, getattr(manager, "get", None)
            # an async contents manager (jupyter_server's default) is saved after the answer; a sync one at once
            self._deferred = inspect.iscoroutinefunction(getattr(manager, "save", None))
            if self._deferred:
                self._flush_before_others_read(manager)
        return manager

    @property
    def deferred(self) -> bool:
        return self.contents is not None and self._deferred

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
        """The notebook as it is now, unsaved edits included. Not to be changed: ``edit`` changes it."""
        async with self.lock(api_path):
            return await self._current(api_path)

    async def _current(self, api_path: str) -> nbformat.NotebookNode:
        """The notebook we hold while its file is as we left it (same mtime and size); else the
        file read again, with our unsaved edits applied again on top of whoever changed it."""
        held = self._held.get(api_path)
        stamp = self._stamp(api_path)
        if held is not None and stamp is not None and held.stamp == stamp:
            return held.nb
        try:
            nb = await self._load(api_path)
        except ToolProblem:
            self._forget(api_path)
            raise
        if held is not None and held.pending:
            kept = [change for change in held.pending if _applied_again(change, nb)]
            log.warning("jupyter-brain: %s changed on disk before our edits were saved; %d of %d edits applied "
                        "again on top", api_path, len(kept), len(held.pending))
            held.nb, held.stamp, held.pending = nb, stamp, kept
        else:
            self._forget(api_path)
            self._held[api_path] = _Held(nb, stamp)
        return nb

    async def _load(self, api_path: str) -> nbformat.NotebookNode:
        if not await self.exists(api_path):
            raise ToolProblem(f"No notebook {api_path!r} under the server's root (list_notebooks shows what there is)")
        try:
            self.contents  # noqa: B018 - the manager in use, and its own get
            model = await ensure_async(self._get(api_path, content=True, type="notebook"))
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
    async def edit(self, api_path: str, change: Change[T], new_cells: Sequence[Any] = ()) -> T:
        """``change(nb)`` applied under the notebook's lock, once ``new_cells`` (what it writes) are
        known valid. Readers see it at once; the file is written a moment later (``SAVE_DELAY_S``),
        one save for a burst of edits. ``change`` may run again: on the file as someone else
        changed it before our save (it must then find its cells by id, and may raise ToolProblem
        when they are gone)."""
        async with self.lock(api_path):
            nb = await self._current(api_path)
            check_cells(api_path, nb, new_cells)
            result = change(nb)
            held = self._held[api_path]
            if not self.deferred:
                held.pending.append(change)
                await self._write(api_path, held)
                return result
            if not held.pending:
                held.since = asyncio.get_running_loop().time()
            held.pending.append(change)
            self._schedule(api_path, held)
            return result

    def _schedule(self, api_path: str, held: _Held) -> None:
        loop = asyncio.get_running_loop()
        if held.timer is not None:
            held.timer.cancel()
        delay = max(0.0, min(SAVE_DELAY_S, held.since + SAVE_MAX_DELAY_S - loop.time()))
        held.timer = loop.call_later(delay, self._save_later, api_path)

    def _save_later(self, api_path: str) -> None:
        task = asyncio.ensure_future(self.flush(api_path))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def flush(self, api_path: str) -> None:
        """Write ``api_path``'s unsaved edits now (merged with any change made to the file meanwhile)."""
        async with self.lock(api_path):
            held = self._held.get(api_path)
            if held is None or not held.pending:
                return
            try:
                await self._current(api_path)
                await self._write(api_path, self._held[api_path])
            except Exception as exc:  # noqa: BLE001 - the agent has its answer; the operator gets the log line
                log.error("jupyter-brain: could not save %s (the edits stay in memory and are saved with the next "
                          "edit or at shutdown): %s", api_path, getattr(exc, "log_message", None) or exc)

    async def flush_all(self) -> None:
        """Every unsaved edit written: when a session ends, before the server stops."""
        for api_path in [path for path, held in self._held.items() if held.pending]:
            await self.flush(api_path)

    async def _write(self, api_path: str, held: _Held) -> None:
        if held.timer is not None:
            held.timer.cancel()
            held.timer = None
        inside = _IN_OUR_SAVE.set(True)
        try:
            await ensure_async(self.contents.save({"type": "notebook", "format": "json", "content": held.nb}, api_path))
        except Exception:
            if not self.deferred:
                self._forget(api_path)  # the next read is the file's again
            raise
        finally:
            _IN_OUR_SAVE.reset(inside)
        held.pending.clear()
        held.stamp = self._stamp(api_path)

    def _forget(self, api_path: str) -> None:
        held = self._held.pop(api_path, None)
        if held is not None and held.timer is not None:
            held.timer.cancel()

    def _stamp(self, api_path: str) -> tuple[int, int] | None:
        try:
            stat = os.stat(self.real_path(api_path))
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def _flush_before_others_read(self, contents: Any) -> None:
        """A notebook opened (or renamed) through the server, JupyterLab's tab say, gets our
        unsaved edits first: the contents manager's ``get`` and ``rename`` flush them."""
        get = contents.get
        rename: Any = getattr(contents, "rename", None)

        async def flushed(path: str) -> None:
            api_path = str(path).strip("/")
            if api_path in self._held and not _IN_OUR_SAVE.get():  # waits for a save under way, too:
                await self.flush(api_path)  # the contents manager writes the file in place

        async def get_flushed(path: str, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("content", args[0] if args else True):
                await flushed(path)
            return await get(path, *args, **kwargs)

        async def rename_flushed(old_path: str, new_path: str) -> Any:
            await flushed(old_path)
            return await ensure_async(rename(old_path, new_path))

        contents.get = get_flushed
        if rename is not None:
            contents.rename = rename_flushed

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
            self._forget(api_path)
            held = self._held[api_path] = _Held(nb, None)
            await self._write(api_path, held)  # at once: the file must exist for the next call


@dataclass
class _Held:
    """A notebook as the agents see it: the file's content (``stamp``: its mtime and size then)
    with ``pending`` edits applied, not yet saved."""

    nb: nbformat.NotebookNode
    stamp: tuple[int, int] | None
    pending: list[Change[Any]] = field(default_factory=list)
    since: float = 0.0  # when the first unsaved edit was made
    timer: asyncio.TimerHandle | None = None


def _applied_again(change: Change[Any], nb: nbformat.NotebookNode) -> bool:
    try:
        change(nb)
        return True
    except ToolProblem:
        return False


def check_cells(api_path: str, nb: nbformat.NotebookNode, cells: Sequence[Any]) -> None:
    """The cells an edit writes, validated alone (validating the whole notebook costs tens of ms)."""
    if not cells:
        return
    alone = {"nbformat": 4, "nbformat_minor": nb.get("nbformat_minor", nbformat.v4.nbformat_minor),
             "metadata": {}, "cells": list(cells)}
    try:
        _validator(nb).validate(alone)
    except nbformat.ValidationError as exc:
        raise ToolProblem(f"The edit would leave {api_path!r} invalid, so it was not made: {exc.message}") from None


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
