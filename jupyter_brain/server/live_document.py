"""Edits through the notebook's open document, when JupyterLab has one: its shared model.

With jupyter-collaboration (jupyter-server-ydoc) on the server, a notebook open in a tab is a
room holding a ``YNotebook`` that every tab edits; the room saves it to the file a moment after
each change, and reloads it when the file changes under it. Writing the file then would race
the room (its reload drops the user's newest keystrokes, and our edit shows only after it), so
an edit of an open notebook is made in the room's document instead: the user sees the cell
appear at once, their own edits in other cells are untouched, and the room's autosave writes
the file. With no room for the notebook (or no jupyter-collaboration), the file route stays:
``NotebookStore`` edits and saves through the contents manager.

``NotebookDocument`` is what both routes offer the tools; ``LiveDocuments`` picks one per call.
An edit is a function of a notebook (the tools' own, as for the file): it runs on a copy of
the document's notebook, and only what it changed is applied to the shared model, by cell id,
in one transaction and without an ``await`` between reading and writing, so nothing another
client sends can fall in between.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

import nbformat

from .errors import ToolProblem
from .notebooks import Change, NotebookStore, check_cells

log = logging.getLogger("jupyter_brain.server")
T = TypeVar("T")
YDOC_EXTENSION = "jupyter_server_ydoc"
SETTLE_TIMEOUT_S = 30.0
_CELL_FIELDS_IN_PLACE = {"source", "outputs", "execution_count", "metadata", "id"}


class NotebookDocument(Protocol):
    """A notebook the tools read and change: the open document, or the file."""

    async def read(self, api_path: str) -> nbformat.NotebookNode:
        """The notebook as it is now (not to be changed: ``edit`` changes it)."""
        ...

    async def edit(self, api_path: str, change: Change[T], new_cells: Sequence[Any] = ()) -> T:
        """``change(nb)`` made, once ``new_cells`` (the cells it writes) are known valid."""
        ...


class LiveDocuments:
    """The open document of a notebook when there is one, else the file (``NotebookStore``)."""

    def __init__(self, serverapp: Any, store: NotebookStore) -> None:
        self.serverapp = serverapp
        self.store = store

    async def read(self, api_path: str) -> nbformat.NotebookNode:
        document = await self.open_document(api_path)
        if document is None:
            return await self.store.read(api_path)
        return _notebook_of(document)

    async def edit(self, api_path: str, change: Change[T], new_cells: Sequence[Any] = ()) -> T:
        document = await self.open_document(api_path)
        if document is None:
            return await self.store.edit(api_path, change, new_cells)
        return edit_document(api_path, document, change, new_cells)

    async def open_document(self, api_path: str) -> Any | None:
        """The shared ``YNotebook`` of ``api_path``'s room, or None when no tab has it open (or
        jupyter-collaboration is absent or off). Never opens a room itself: a room nobody
        looks at would only add a second writer of the file. A room still loading (or
        reloading the file) is waited for: an edit made then would be overwritten by the load."""
        extension = self._ydoc_extension()
        if extension is None:
            return None
        try:
            file_ids = self.serverapp.web_app.settings.get("file_id_manager")
            file_id = file_ids.get_id(api_path) if file_ids is not None else None
            if file_id is None:  # never opened collaboratively: no room
                return None
            room = await _room(extension, f"json:notebook:{file_id}")
            if room is None:
                return None
            await _settled(room, api_path)
            document = await extension.get_document(path=api_path, content_type="notebook", file_format="json",
                                                    copy=False)
        except ToolProblem:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure there leaves the file route, which works
            log.warning("jupyter-brain: could not reach the open document of %s (editing the file): %s", api_path, exc)
            return None
        if document is None or not hasattr(document, "ycells"):
            return None
        return document

    def _ydoc_extension(self) -> Any | None:
        manager = getattr(self.serverapp, "extension_manager", None)
        point = getattr(manager, "extension_points", {}).get(YDOC_EXTENSION)
        app = getattr(point, "app", None)
        if app is None or not hasattr(app, "get_document") or getattr(app, "disable_rtc", False):
            return None
        return app


async def _room(extension: Any, room_id: str) -> Any | None:
    server = getattr(extension, "ywebsocket_server", None)
    if server is None:
        return None
    try:
        return await server.get_room(room_id)
    except Exception:  # noqa: BLE001 - RoomNotFound (its module path differs between versions)
        return None


async def _settled(room: Any, api_path: str) -> None:
    """Once ``room`` has loaded its document and is not reloading it from the file."""
    loop = asyncio.get_running_loop()
    until = loop.time() + SETTLE_TIMEOUT_S
    while not getattr(room, "ready", True) or _locked(getattr(room, "_update_lock", None)):
        if loop.time() > until:
            raise ToolProblem(f"The open document of {api_path!r} is still loading; try again in a moment")
        await asyncio.sleep(0.05)
    loaded = getattr(room, "_document_progressively_loaded", None)  # jupyter-collaboration 5: cells come in later
    if getattr(room, "_document_load_progressively", False) and isinstance(loaded, asyncio.Future) and not loaded.done():
        await asyncio.wait_for(asyncio.shield(loaded), SETTLE_TIMEOUT_S)


def _locked(lock: Any) -> bool:
    return isinstance(lock, asyncio.Lock) and lock.locked()


# the shared model ------------------------------------------------------------------------
def _notebook_of(document: Any) -> nbformat.NotebookNode:
    """The document as an nbformat notebook, each cell with the id it has in the shared model
    (jupyter_ydoc leaves ids out of nbformat 4.4 notebooks; the tools find cells by id)."""
    content = document.get()
    cells = content["cells"]
    ycells = document.ycells
    if len(cells) != len(ycells):  # exact duplicates dropped by get(): read cell by cell
        cells = [document.get_cell(i) for i in range(len(ycells))]
    for cell, ycell in zip(cells, ycells, strict=True):
        if ycell.get("id") is not None:
            cell["id"] = ycell.get("id")
    content["cells"] = cells
    return nbformat.from_dict(content)


def edit_document(api_path: str, document: Any, change: Change[T], new_cells: Sequence[Any] = ()) -> T:
    """``change`` made on a copy of the document's notebook, then what it changed written to
    the shared model. Synchronous on purpose: no other client's update can come in between."""
    before = _notebook_of(document)
    check_cells(api_path, before, new_cells)
    after = copy.deepcopy(before)
    result = change(after)  # a ToolProblem here leaves the document as it was
    if after.get("metadata") != before.get("metadata"):
        raise ToolProblem("This edit changes the notebook's metadata, which is not done in an open document")
    with document.ydoc.transaction():
        _apply_cells(document, before.cells, after.cells)
    return result


def _apply_cells(document: Any, before: list[Any], after: list[Any]) -> None:
    """The shared model's cells made ``after``'s: cells gone deleted, new ones inserted, and a
    cell present in both changed field by field (its editor stays, as do the user's cursor and
    typing in it)."""
    ycells = document.ycells
    old_by_id = {cell.get("id"): cell for cell in before}
    wanted = {cell.get("id") for cell in after}
    for i in reversed(range(len(ycells))):
        if ycells[i].get("id") not in wanted:
            del ycells[i]
    for i, cell in enumerate(after):
        cell_id = cell.get("id")
        here = ycells[i].get("id") if i < len(ycells) else None
        if here == cell_id and cell_id in old_by_id:
            if not _update_in_place(ycells[i], old_by_id[cell_id], cell):
                del ycells[i]
                ycells.insert(i, document.create_ycell(_plain(cell)))
            continue
        for j in range(i + 1, len(ycells)):  # moved: taken out where it was
            if ycells[j].get("id") == cell_id:
                del ycells[j]
                break
        ycells.insert(i, document.create_ycell(_plain(cell)))
    del ycells[len(after):]


def _update_in_place(ycell: Any, old: Any, new: Any) -> bool:
    """``ycell`` changed from ``old`` to ``new`` field by field; False when a field cannot be
    (another cell type, say), and the cell is then replaced whole."""
    from pycrdt import Array, Map, Text

    changed = {key for key in set(old) | set(new) if old.get(key) != new.get(key)}
    if changed - _CELL_FIELDS_IN_PLACE or "id" in changed:
        return False
    if "source" in changed:
        source = _joined(new.get("source", ""))
        text = ycell.get("source")
        if isinstance(text, Text):
            text.clear()
            text += source
        else:
            ycell["source"] = Text(source)
    if "outputs" in changed:
        outputs = ycell.get("outputs")
        if not isinstance(outputs, Array):
            outputs = ycell["outputs"] = Array()
        outputs.clear()
        outputs.extend(_youtputs(new.get("outputs", [])))
    if "execution_count" in changed:
        ycell["execution_count"] = new.get("execution_count")
    if "metadata" in changed:
        metadata = ycell.get("metadata")
        values = _plain(new.get("metadata", {}))
        if not isinstance(metadata, Map):
            ycell["metadata"] = Map(values)
        else:
            for key in [k for k in metadata.keys() if k not in values]:
                del metadata[key]
            for key, value in values.items():
                if metadata.get(key) != value:
                    metadata[key] = value
    return True


def _youtputs(outputs: list[Any]) -> list[Any]:
    """Outputs as jupyter_ydoc writes them: a map each, a stream's text a shared text (the
    front end appends to it)."""
    from pycrdt import Map, Text

    made = []
    for output in _plain(outputs):
        if output.get("output_type") == "stream":
            output["text"] = Text(_joined(output.get("text", "")))
        made.append(Map(output))
    return made


def _plain(value: Any) -> Any:
    """NotebookNodes as plain dicts and lists (what pycrdt takes), copied."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)
