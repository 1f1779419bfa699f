"""The workspace index: which files it reads, the anchors of their passages, BM25 ranking,
and freshness (only new or changed files are read again)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from jupyter_brain.agent.context_pack import WorkspaceIndex, index_for
from jupyter_brain.agent.context_pack.chunks import CHUNK_LINES, notebook_passages, text_passages
from jupyter_brain.agent.context_pack.scan import MAX_FILE_BYTES, scan_workspace


def _notebook(cells: list[tuple[str, str]]) -> str:
    return json.dumps({"cells": [{"cell_type": kind, "source": src, "metadata": {}} for kind, src in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "sales.py").write_text(
        "import pandas as pd\n\n\ndef load():\n    return pd.read_csv('sales.csv')\n\n\n"
        "def revenue_by_region(df):\n    \"\"\"Revenue per region in US dollars.\"\"\"\n"
        "    return df.groupby('region').revenue.sum()\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("# Notes\n\nThe churn model uses gradient boosting.\n", encoding="utf-8")
    (tmp_path / "analysis.ipynb").write_text(_notebook([
        ("markdown", "# Analysis"), ("code", "import numpy as np"), ("code", ""),
        ("code", "forecast = np.polyfit(x, y, 2)  # quarterly forecast"),
    ]), encoding="utf-8")
    return tmp_path


def anchors(index: WorkspaceIndex, query: str, k: int = 5) -> list[str]:
    return [p.anchor for p in index.search(query, k)]


def test_text_and_notebook_passages_carry_their_anchors(folder: Path) -> None:
    index = WorkspaceIndex(folder)
    assert anchors(index, "revenue region")[0] == "sales.py:8"
    assert anchors(index, "quarterly forecast polyfit")[0] == "analysis.ipynb#cell-4"
    assert anchors(index, "churn gradient boosting") == ["notes.md:1"]
    hit = index.search("churn", 1)[0]
    assert hit.path == "notes.md" and "gradient boosting" in hit.text and hit.score > 0


def test_empty_cells_are_skipped_and_cells_count_from_one() -> None:
    nb = _notebook([("markdown", "# Title"), ("code", "   "), ("code", ["a = 1\n", "b = 2"])]).encode()
    assert [(p.anchor, p.text) for p in notebook_passages(nb, "nb.ipynb")] == [
        ("nb.ipynb#cell-1", "# Title"), ("nb.ipynb#cell-3", "a = 1\nb = 2")]
    assert notebook_passages(b"not json", "broken.ipynb") == []


def test_long_text_is_cut_into_passages_that_start_at_their_line() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 101))
    passages = text_passages(text, "big.txt")
    assert len(passages) >= 100 // CHUNK_LINES
    assert passages[0].anchor == "big.txt:1"
    for p in passages:
        first = int(p.anchor.rsplit(":", 1)[1])
        assert p.text.splitlines()[0] == f"line {first}"


def test_markdown_is_cut_at_headings() -> None:
    text = "# One\nalpha\nbeta\ngamma\n\n# Two\ndelta\n"
    assert [p.anchor for p in text_passages(text, "doc.md", ".md")] == ["doc.md:1", "doc.md:6"]


def test_hidden_venv_node_modules_binary_and_big_files_are_skipped(folder: Path) -> None:
    for hidden in (".git/config.md", ".jupyter_brain/notes.md", ".ipynb_checkpoints/a.md", "node_modules/x/readme.md",
                   "__pycache__/m.py", "myenv/lib/site.py", ".hidden.md"):
        path = folder / hidden
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("secretword here", encoding="utf-8")
    (folder / "myenv" / "pyvenv.cfg").write_text("home = /usr", encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG secretword")
    (folder / "blob.txt").write_bytes(b"secretword\x00\x01\x02")
    (folder / "huge.txt").write_text("secretword " * 200_000, encoding="utf-8")
    (folder / "kept.txt").write_text("secretword kept", encoding="utf-8")
    files = {f.rel for f in scan_workspace(folder.resolve())}
    assert files == {"sales.py", "notes.md", "analysis.ipynb", "blob.txt", "kept.txt"}
    assert anchors(WorkspaceIndex(folder), "secretword") == ["kept.txt:1"]


def test_a_big_table_gives_its_head_only(folder: Path) -> None:
    rows = "\n".join(f"{i},north,{i * 3}" for i in range(100_000))
    (folder / "sales.csv").write_text("order_id,region,revenue\n" + rows, encoding="utf-8")
    assert (folder / "sales.csv").stat().st_size > MAX_FILE_BYTES  # a text file this big would be skipped
    index = WorkspaceIndex(folder)
    hits = [p for p in index.search("order_id region revenue", 10) if p.path == "sales.csv"]
    assert [p.anchor for p in hits] == ["sales.csv:1"]
    assert hits[0].text.startswith("order_id,region,revenue\n0,north,0") and len(hits[0].text.splitlines()) == 15


def test_a_symlink_out_of_the_folder_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("launch codes", encoding="utf-8")
    inside = tmp_path / "work"
    inside.mkdir()
    (inside / "link.md").symlink_to(outside / "secret.md")
    (inside / "linkdir").symlink_to(outside, target_is_directory=True)
    assert WorkspaceIndex(inside).search("launch codes", 5) == []


def test_only_changed_files_are_read_again(folder: Path) -> None:
    index = WorkspaceIndex(folder)
    first = index.refresh()
    assert (first.files, first.read) == (3, 3)
    assert index.refresh().read == 0  # nothing changed: nothing read
    notes = folder / "notes.md"
    notes.write_text("# Notes\n\nThe churn model now uses logistic regression.\n", encoding="utf-8")
    st = notes.stat()
    os.utime(notes, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # a later mtime, whatever the clock
    stats = index.refresh()
    assert (stats.read, stats.removed) == (1, 0)
    assert "logistic regression" in index.search("churn model", 1)[0].text
    (folder / "sales.py").unlink()
    (folder / "new.md").write_text("inventory turnover", encoding="utf-8")
    stats = index.refresh()
    assert (stats.files, stats.read, stats.removed) == (3, 1, 1)
    assert anchors(index, "revenue region") == [] and anchors(index, "inventory") == ["new.md:1"]


def test_same_size_edit_with_a_new_mtime_is_seen(folder: Path) -> None:
    index = WorkspaceIndex(folder)
    index.refresh()
    notes = folder / "notes.md"
    text = notes.read_text(encoding="utf-8").replace("churn", "CHURN")
    st = notes.stat()
    notes.write_text(text, encoding="utf-8")
    os.utime(notes, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert index.refresh().read == 1


def test_top_k_bounds_the_hits_and_unrelated_queries_find_nothing(folder: Path) -> None:
    index = WorkspaceIndex(folder)
    assert len(index.search("import", 1)) == 1
    assert len(index.search("import", 5)) == 2  # sales.py and analysis.ipynb#cell-2 share the word
    assert index.search("zebra quantum", 5) == [] and index.search("the of", 5) == []
    assert index.search("revenue", 0) == []


def test_the_index_of_a_folder_is_kept_for_the_kernel(folder: Path) -> None:
    assert index_for(folder) is index_for(str(folder) + "/.")
    with pytest.raises(ValueError, match="not a directory"):
        WorkspaceIndex(folder / "sales.py")
