"""Edits answered before they are saved (issue #35's overhead goal): the notebook we hold is
what every read sees, a burst of edits is one save, and nothing is lost when someone else
writes the file first, opens it through the server, or the server stops."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nbformat
import pytest

from jupyter_brain.server import notebooks
from jupyter_brain.server.notebooks import NotebookStore


def _contents(root: Path) -> Any:
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

    manager = AsyncLargeFileManager(root_dir=str(root))
    manager.saves = 0
    save = manager.save

    async def counted(model: dict[str, Any], path: str = "") -> Any:
        manager.saves += 1
        return await save(model, path)

    manager.save = counted
    return manager


def _write(path: Path, *sources: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)


def _on_disk(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells]


def _add(source: str) -> Any:
    cell = nbformat.v4.new_code_cell(source)
    return lambda nb: nb.cells.append(cell)


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notebooks, "SAVE_DELAY_S", 0.05)
    monkeypatch.setattr(notebooks, "SAVE_MAX_DELAY_S", 0.2)


def test_reads_see_edits_at_once_and_a_burst_is_saved_once(tmp_path: Path) -> None:
    _write(tmp_path / "a.ipynb", "x = 1")
    contents = _contents(tmp_path)
    store = NotebookStore(contents, tmp_path)
    assert store.deferred

    async def burst() -> tuple[list[str], list[str]]:
        for i in range(5):
            await store.edit("a.ipynb", _add(f"y{i}"))
        seen = [c.source for c in (await store.read("a.ipynb")).cells]
        before = _on_disk(tmp_path / "a.ipynb")
        await asyncio.sleep(0.6)  # past SAVE_MAX_DELAY_S: the timer has saved
        return seen, before

    seen, before = asyncio.run(burst())
    assert seen == ["x = 1", "y0", "y1", "y2", "y3", "y4"]
    assert before == ["x = 1"]  # answered before the save
    assert _on_disk(tmp_path / "a.ipynb") == seen and contents.saves == 1


def test_a_change_made_by_someone_else_first_keeps_both(tmp_path: Path) -> None:
    _write(tmp_path / "b.ipynb", "x = 1")
    store = NotebookStore(_contents(tmp_path), tmp_path)

    async def race() -> None:
        await store.edit("b.ipynb", _add("ours"))
        _write(tmp_path / "b.ipynb", "x = 1", "theirs")  # the user's tab saved meanwhile
        await store.flush("b.ipynb")

    asyncio.run(race())
    assert _on_disk(tmp_path / "b.ipynb") == ["x = 1", "theirs", "ours"]


def test_opening_it_through_the_server_or_stopping_writes_the_edits_first(tmp_path: Path) -> None:
    _write(tmp_path / "c.ipynb", "x = 1")
    contents = _contents(tmp_path)
    store = NotebookStore(contents, tmp_path)

    async def open_then_stop() -> list[str]:
        await store.edit("c.ipynb", _add("opened"))
        model = await contents.get("c.ipynb", content=True, type="notebook")  # JupyterLab opening the tab
        await store.edit("c.ipynb", _add("stopped"))
        await store.flush_all()  # the session ended or the server stops
        return [c.source for c in model["content"].cells]

    assert asyncio.run(open_then_stop()) == ["x = 1", "opened"]
    assert _on_disk(tmp_path / "c.ipynb") == ["x = 1", "opened", "stopped"]
    assert contents.saves == 2


def test_a_read_through_the_server_during_our_save_waits_for_it(tmp_path: Path) -> None:
    """The contents manager writes a notebook in place: a tab's read beside our save could see
    half a file (JupyterLab then says "Unreadable Notebook"), so it waits for the save."""
    _write(tmp_path / "d.ipynb", "x = 1")
    contents = _contents(tmp_path)
    save = contents.save

    async def slow(model: dict[str, Any], path: str = "") -> Any:
        await asyncio.sleep(0.2)  # the file is being written
        return await save(model, path)

    contents.save = slow
    store = NotebookStore(contents, tmp_path)

    async def read_during_save() -> list[str]:
        await store.edit("d.ipynb", _add("y = 2"))
        saving = asyncio.ensure_future(store.flush("d.ipynb"))
        await asyncio.sleep(0.05)
        model = await contents.get("d.ipynb", content=True, type="notebook")
        await saving
        return [c.source for c in model["content"].cells]

    assert asyncio.run(read_during_save()) == ["x = 1", "y = 2"]
