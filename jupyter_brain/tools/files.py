"""Read-only file tools: list, read and search files inside the workspace root.

Every path goes through ``WorkspaceRoot`` so the model can look around the user's
project but never outside it. Outputs are capped well below the executor's artifact
threshold and always say what was left out and how to get the rest.
"""

from __future__ import annotations

import codecs
import difflib
import fnmatch
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

from pydantic import Field

from jupyter_brain.agent.tools import ToolError, ToolSpec, tool
from jupyter_brain.tools.paths import WorkspaceRoot

SKIP_DIRS = frozenset({".git", "__pycache__", ".ipynb_checkpoints", ".venv", "node_modules", ".jupyter_brain"})
MAX_LIST_ENTRIES = 200
MAX_WALK_ENTRIES = 20_000  # entries visited at most, so huge trees stay fast
MAX_LINE_CHARS = 1_000
READ_CHAR_BUDGET = 10_000  # read_file stops early rather than overflow into an artifact
SEARCH_MAX_FILES = 5_000
SEARCH_MAX_FILE_BYTES = 10_000_000
SNIFF_BYTES = 8_192

_BINARY_HINTS = {
    ".parquet": "pandas.read_parquet",
    ".feather": "pandas.read_feather",
    ".xlsx": "pandas.read_excel",
    ".xls": "pandas.read_excel",
    ".pkl": "pandas.read_pickle (only for files you trust)",
    ".pickle": "pandas.read_pickle (only for files you trust)",
    ".npy": "numpy.load",
    ".npz": "numpy.load",
    ".h5": "pandas.read_hdf or h5py",
    ".hdf5": "pandas.read_hdf or h5py",
    ".png": "PIL.Image.open or matplotlib.pyplot.imread",
    ".jpg": "PIL.Image.open or matplotlib.pyplot.imread",
    ".jpeg": "PIL.Image.open or matplotlib.pyplot.imread",
    ".zip": "zipfile.ZipFile",
    ".gz": "gzip.open",
    ".sqlite": "sqlite3.connect",
    ".db": "sqlite3.connect",
}


def file_tools(root: str | Path | WorkspaceRoot) -> list[ToolSpec]:
    """The file tools for one workspace root (``list_files``, ``read_file``, ``search_files``)."""
    workspace = root if isinstance(root, WorkspaceRoot) else WorkspaceRoot(root)

    @tool(effect="read", keywords="files folder directory ls workspace data csv json")
    def list_files(path: str = ".", pattern: str = "*", recursive: bool = False) -> str:
        """List workspace files and folders with sizes.

        Args:
            path: folder, relative to the workspace.
            pattern: glob on names (*.csv); on relative paths if it has a '/'.
            recursive: include sub-folders.
        """
        folder = workspace.resolve_readable(path)
        if not folder.exists():
            raise _missing(workspace, path, folder)
        if not folder.is_dir():
            return _entry_line(workspace, folder)
        lines: list[str] = []
        total = 0
        incomplete = False
        for visited, entry in enumerate(_walk(folder, recursive), 1):
            if visited > MAX_WALK_ENTRIES:
                incomplete = True
                break
            rel = workspace.relative(entry)
            name_or_rel = rel if "/" in pattern else entry.name
            if not fnmatch.fnmatch(name_or_rel, pattern):
                continue
            total += 1
            if len(lines) < MAX_LIST_ENTRIES:
                lines.append(_entry_line(workspace, entry))
        where = workspace.relative(folder)
        if not lines:
            return f"No entries matching {pattern!r} in {where}/" + (" (recursive)" if recursive else "")
        header = f"{where}/ — {total}{'+' if incomplete else ''} entries"
        if incomplete:
            header += f" (stopped after looking at {MAX_WALK_ENTRIES} entries)"
        if total > len(lines):
            lines.append(f"… ({total - len(lines)} more; narrow with path or pattern)")
        return header + "\n" + "\n".join(lines)

    @tool(effect="read", keywords="open read contents csv tsv json txt md yaml toml py ipynb log")
    def read_file(
        path: str,
        start_line: Annotated[int, Field(ge=1)] = 1,
        max_lines: Annotated[int, Field(ge=1, le=2000)] = 400,
    ) -> str:
        """Read a text file or notebook with line numbers (binary files: use run_python).

        Args:
            path: relative to the workspace.
            start_line: first line (1-based), to page.
        """
        file = _existing_file(workspace, path)
        if file.suffix.lower() == ".ipynb":
            lines, note = _notebook_lines(file)
            return _number_lines(workspace.relative(file), iter(lines), start_line, max_lines, note)
        encoding = _text_encoding(file)
        if encoding is None:
            raise _binary_error(workspace, file)
        with open(file, encoding=encoding, errors="replace", newline=None) as handle:
            note = "" if encoding == "utf-8" else f"(not valid UTF-8; decoded as {encoding})"
            return _number_lines(workspace.relative(file), handle, start_line, max_lines, note)

    @tool(effect="read", keywords="find grep search where defined used occurrences code")
    def search_files(
        query: str,
        path: str = ".",
        glob: str = "*",
        regex: bool = False,
        max_results: Annotated[int, Field(ge=1, le=500)] = 50,
        ignore_case: bool = False,
    ) -> str:
        """Grep text files and notebooks; prints path:line: text.

        Args:
            query: text, or a Python regex if regex.
            path: file or folder, relative to the workspace.
            glob: file name filter (*.py).
        """
        if query == "":
            raise ToolError("query must not be empty")
        flags = re.IGNORECASE if ignore_case else 0
        try:
            matcher = re.compile(query if regex else re.escape(query), flags)
        except re.error as exc:
            where = f" at position {exc.pos}" if exc.pos is not None else ""
            raise ToolError(
                f"invalid regular expression {query!r}: {exc.msg}{where}. "
                "Fix the pattern or pass regex=false to search for the literal text."
            ) from None
        start = workspace.resolve_readable(path)
        if not start.exists():
            raise _missing(workspace, path, start)
        files = [start] if start.is_file() else (p for p in _walk(start, True) if p.is_file())
        results: list[str] = []
        scanned = skipped = 0
        truncated = False
        for visited, file in enumerate(files, 1):
            if visited > MAX_WALK_ENTRIES:
                truncated = True
                break
            rel = workspace.relative(file)
            if not fnmatch.fnmatch(rel if "/" in glob else file.name, glob):
                continue
            if scanned >= SEARCH_MAX_FILES:
                truncated = True
                break
            scanned += 1
            lines = _searchable_lines(file) if workspace.contains(file) else None
            if lines is None:
                skipped += 1
                continue
            for number, line in enumerate(lines, 1):
                if matcher.search(line):
                    results.append(f"{rel}:{number}: {_clip_line(line.rstrip(), 300)}")
                    if len(results) >= max_results:
                        truncated = True
                        break
            if len(results) >= max_results:
                break
        summary = f"{len(results)} match{'es' if len(results) != 1 else ''} in {scanned} files searched"
        if skipped:
            limit_mb = SEARCH_MAX_FILE_BYTES // 1_000_000
            summary += f" ({skipped} skipped: binary, over {limit_mb} MB, or linked outside the workspace)"
        if truncated:
            summary += "; stopped early — narrow with path or glob, or raise max_results"
        if not results:
            return f"No matches for {query!r}. {summary}."
        return "\n".join(results) + f"\n[{summary}]"

    return [list_files, read_file, search_files]


# walking ---------------------------------------------------------------------
def _walk(folder: Path, recursive: bool) -> Iterator[Path]:
    """Entries under ``folder`` in sorted order, skipping noise folders; never follows
    symlinked folders (a link out of the workspace must not widen the search)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: (not _is_real_dir(e), e.name.lower()))
    except OSError:
        return
    for entry in entries:
        if entry.name in SKIP_DIRS and _is_real_dir(entry):
            continue
        yield Path(entry.path)
        if recursive and _is_real_dir(entry):
            yield from _walk(Path(entry.path), True)


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _entry_line(workspace: WorkspaceRoot, entry: Path) -> str:
    rel = workspace.relative(entry)
    try:
        if entry.is_symlink():
            if not workspace.contains(entry):
                return f"{rel} -> (symlink pointing outside the workspace)"
            target = entry.resolve()
            return f"{rel} -> {workspace.relative(target)}{'/' if target.is_dir() else ''}"
        if entry.is_dir():
            return f"{rel}/"
        return f"{rel}  {human_size(entry.stat().st_size)}"
    except OSError as exc:
        return f"{rel}  (unreadable: {exc.strerror})"


def human_size(size: int) -> str:
    """``512 B``, ``1.5 KB``, ``3.2 MB``: sizes shown to the model and the user."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


# reading ---------------------------------------------------------------------
def _existing_file(workspace: WorkspaceRoot, path: str) -> Path:
    file = workspace.resolve_readable(path)
    if not file.exists():
        raise _missing(workspace, path, file)
    if file.is_dir():
        raise ToolError(f"{path!r} is a folder; use list_files to see what it contains")
    if not file.is_file():
        raise ToolError(f"{path!r} is not a regular file (a pipe, socket or device); it cannot be read")
    return file


def _missing(workspace: WorkspaceRoot, path: str, resolved: Path) -> ToolError:
    parent = resolved.parent
    message = f"{path!r} does not exist in the workspace ({workspace.root})"
    if parent.is_dir() and workspace.contains(parent):
        names = [p.name for p in parent.iterdir() if p.name not in SKIP_DIRS]
        close = difflib.get_close_matches(resolved.name, names, n=5, cutoff=0.5)
        if close:
            base = workspace.relative(parent)
            shown = [name if base == "." else f"{base}/{name}" for name in close]
            message += f". Did you mean: {', '.join(shown)}?"
    return ToolError(message + " Use list_files to see what exists.")


def _text_encoding(file: Path) -> str | None:
    """'utf-8', 'latin-1' for text in a legacy encoding, or None for binary content."""
    try:
        with open(file, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise ToolError(f"cannot read {file.name!r}: {exc.strerror}") from None
    if b"\x00" in head:
        return None
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        pass
    controls = sum(1 for b in head if b < 0x20 and b not in b"\t\n\r\f\b\x1b")
    return None if controls > len(head) // 100 else "latin-1"


def _binary_error(workspace: WorkspaceRoot, file: Path) -> ToolError:
    size = human_size(file.stat().st_size)
    hint = _BINARY_HINTS.get(file.suffix.lower())
    how = f"load it with run_python using {hint}" if hint else "load it with run_python instead"
    return ToolError(f"{workspace.relative(file)} is a binary file ({size}); read_file only shows text — {how}.")


def _number_lines(label: str, lines: Iterator[str], start: int, max_lines: int, note: str) -> str:
    out: list[str] = []
    used = 0
    number = 0
    stopped = False
    source = iter(lines)
    for number, raw in enumerate(source, 1):
        if number < start:
            continue
        if len(out) >= max_lines or used >= READ_CHAR_BUDGET:
            stopped = True  # line `number` is the first one not shown
            break
        line = _clip_line(raw.rstrip("\r\n"), MAX_LINE_CHARS)
        out.append(f"{number:>6}\t{line}")
        used += len(line) + 8
    if not out:
        plural = "s" if number != 1 else ""
        raise ToolError(f"{label} has only {number} line{plural}; start_line {start} is past the end")
    last_shown = start + len(out) - 1
    remaining = 1 + sum(1 for _ in source) if stopped else 0
    total = last_shown + remaining
    header = f"{label} (lines {start}–{last_shown} of {total})" + (f" {note}" if note else "")
    footer = ""
    if remaining:
        why = f"max_lines={max_lines}" if len(out) >= max_lines else "output size limit reached"
        footer = f"\n[{remaining} more lines ({why}); continue with start_line={last_shown + 1}]"
    return header + "\n" + "\n".join(out) + footer


def _clip_line(line: str, limit: int) -> str:
    if len(line) <= limit:
        return line
    return line[:limit] + f"… ({len(line) - limit} more chars)"


# notebooks -------------------------------------------------------------------
def _notebook_lines(file: Path) -> tuple[list[str], str]:
    """A notebook as percent-format text: one '# %%' header per cell, then its source."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        cells = data["cells"]
        if not isinstance(cells, list):
            raise TypeError("cells is not a list")
    except (ValueError, KeyError, TypeError) as exc:
        text = file.read_text(encoding="utf-8", errors="replace")
        return text.splitlines(), f"(not a valid notebook: {exc}; shown as raw text)"
    lines: list[str] = []
    for index, cell in enumerate(cells, 1):
        kind = cell.get("cell_type", "code") if isinstance(cell, dict) else "code"
        tag = "" if kind == "code" else f" [{kind}]"
        if lines:
            lines.append("")
        lines.append(f"# %%{tag} (cell {index})")
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        text = "".join(source) if isinstance(source, list) else str(source)
        lines.extend(text.splitlines())
        if kind == "code" and isinstance(cell, dict):
            lines.extend(_output_summary(cell.get("outputs") or []))
    return lines, f"(notebook, {len(cells)} cells; outputs summarised)"


def _output_summary(outputs: list[object]) -> list[str]:
    lines: list[str] = []
    for output in outputs[:3]:
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type")
        if kind == "stream":
            text = output.get("text", "")
            text = "".join(text) if isinstance(text, list) else str(text)
            first = text.strip().splitlines()[:1]
            lines.append(f"# out ({output.get('name', 'stream')}): {_clip_line(first[0], 200) if first else ''}")
        elif kind == "error":
            lines.append(f"# out (error): {output.get('ename', '')}: {_clip_line(str(output.get('evalue', '')), 200)}")
        elif kind in ("execute_result", "display_data"):
            data = output.get("data") or {}
            plain = data.get("text/plain", "")
            plain = "".join(plain) if isinstance(plain, list) else str(plain)
            first = plain.strip().splitlines()[:1]
            mimes = ", ".join(sorted(k for k in data if k != "text/plain"))
            shown = _clip_line(first[0], 200) if first else ""
            lines.append(f"# out: {shown}" + (f" [{mimes}]" if mimes else ""))
    if len(outputs) > 3:
        lines.append(f"# out: … ({len(outputs) - 3} more outputs)")
    return lines


def _searchable_lines(file: Path) -> list[str] | None:
    """The lines search_files scans (the read_file view for notebooks), or None to skip."""
    try:
        if file.stat().st_size > SEARCH_MAX_FILE_BYTES:
            return None
        if file.suffix.lower() == ".ipynb":
            return _notebook_lines(file)[0]
        encoding = _text_encoding(file)
        if encoding is None:
            return None
        return file.read_text(encoding=encoding, errors="replace").splitlines()
    except (OSError, ToolError):
        return None
