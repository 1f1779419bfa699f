"""Write tools: ``write_file`` and ``edit_file``, contained in the workspace root.

Every write is checkpointed first (``CheckpointStore.snapshot``), so ``%agent undo``
can put the turn's files back, and is atomic (a temporary file in the same folder, then
``os.replace``, keeping the file's permission bits). Binary files and files over
``MAX_WRITE_BYTES`` are refused: those are for ``run_python``. Folders such as ``.git``
and ``.jupyter_brain`` (where the event log and the checkpoints live) are off limits.

Each tool's ``metadata["preview"]`` is ``(arguments) -> {"path", "diff", "new_file",
"summary"}``: the change as a unified diff, computed without writing, for the approval
card (``{"error": ...}`` too when the call would fail).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, ValidationError

from jupyter_brain.agent.checkpoints import CheckpointStore, active_store, atomic_write
from jupyter_brain.agent.tools import ToolError, ToolSpec, tool
from jupyter_brain.tools.files import _text_encoding, human_size
from jupyter_brain.tools.paths import WorkspaceRoot

MAX_WRITE_BYTES = 2_000_000
MAX_DIFF_LINES = 200
PROTECTED_DIRS = frozenset({".git", ".jupyter_brain"})
MINUS = "\u2212"


@dataclass
class _Plan:
    """One write, worked out but not done."""

    target: Path
    rel: str
    before: str | None  # previous text; None for a new file
    after: str
    data: bytes  # ``after`` encoded as it will be written
    note: str = ""  # what edit_file replaced

    @property
    def new_file(self) -> bool:
        return self.before is None

    def diff(self) -> tuple[str, int, int]:
        """Unified diff text (clipped), lines added, lines removed."""
        before = [] if self.before is None else self.before.splitlines()
        after = self.after.splitlines()
        lines = list(difflib.unified_diff(
            before, after, fromfile="/dev/null" if self.before is None else f"a/{self.rel}",
            tofile=f"b/{self.rel}", lineterm="", n=3,
        ))
        added = sum(1 for ln in lines[2:] if ln.startswith("+"))
        removed = sum(1 for ln in lines[2:] if ln.startswith("-"))
        if len(lines) > MAX_DIFF_LINES:
            lines = lines[:MAX_DIFF_LINES] + [f"… ({len(lines) - MAX_DIFF_LINES} more diff lines not shown)"]
        return "\n".join(lines), added, removed

    def summary(self) -> str:
        _, added, removed = self.diff()
        return f"+{added} {MINUS}{removed}"


def write_tools(root: str | Path | WorkspaceRoot, store: Any = None) -> list[ToolSpec]:
    """``write_file`` and ``edit_file`` for one workspace root.

    ``store``: the ``CheckpointStore`` to snapshot into, a callable returning it, or None
    for the active store (the one the running turn's harness began). With no store at
    all the tools still write, and say that the write cannot be undone.
    """
    workspace = root if isinstance(root, WorkspaceRoot) else WorkspaceRoot(root)

    def current_store() -> CheckpointStore | None:
        if store is None:
            return active_store()
        if isinstance(store, CheckpointStore):
            return store
        return store()

    def plan_write(path: str, content: str, overwrite: bool = True) -> _Plan:
        target, rel = _target(workspace, path, current_store())
        data = content.encode("utf-8")
        _check_content(content, data)
        before = _existing_text(workspace, target)
        if before is not None and not overwrite:
            raise ToolError(f"{rel} already exists; pass overwrite=true to replace it, or use edit_file "
                            "to change part of it")
        return _Plan(target, rel, None if before is None else before[0], content, data)

    def plan_edit(path: str, old: str, new: str, count: int = 1) -> _Plan:
        target, rel = _target(workspace, path, current_store())
        if old == "":
            raise ToolError("old must not be empty; to create or replace a whole file use write_file")
        if old == new:
            raise ToolError("old and new are the same text; nothing would change")
        existing = _existing_text(workspace, target)
        if existing is None:
            raise ToolError(f"{rel} does not exist; create it with write_file")
        text, encoding = existing
        found = text.count(old)
        if found == 0 and "\r\n" in text and "\r\n" not in old:  # the model writes '\n' line ends
            crlf_old, crlf_new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            if text.count(crlf_old):
                old, new, found = crlf_old, crlf_new, text.count(crlf_old)
        if found == 0:
            raise ToolError(_not_found(rel, text, old))
        if found > count:
            raise ToolError(_too_many(rel, text, old, found, count))
        after = text.replace(old, new)
        data = after.encode(encoding)
        _check_content(after, data)
        note = f"replaced {found} occurrence{'s' * (found != 1)}"
        return _Plan(target, rel, text, after, data, note)

    def apply(plan: _Plan, verb: str) -> str:
        if plan.before is not None and plan.before == plan.after and plan.target.exists():
            return f"No change: {plan.rel} already has this content."
        checkpoints = current_store()
        if checkpoints is not None:
            try:
                checkpoints.snapshot(plan.target)
            except (ValueError, OSError) as exc:
                raise ToolError(f"cannot checkpoint {plan.rel} before writing it ({exc}); nothing was written") from None
        try:
            atomic_write(plan.target, plan.data)
        except OSError as exc:
            raise ToolError(f"cannot write {plan.rel}: {exc.strerror or exc}") from None
        if checkpoints is not None:
            checkpoints.record_write(plan.target, plan.data)
        _, added, removed = plan.diff()
        lines = _line_count(plan.after)
        size = human_size(len(plan.data))
        head = f"{verb} {plan.rel}" + (f": {plan.note}" if plan.note else "")
        message = (f"{head} ({lines} line{'s' * (lines != 1)}, {size}; "
                   f"+{added} {MINUS}{removed} lines{_where(plan)}).")
        if checkpoints is None:
            message += " No checkpoint store is active, so this write cannot be undone."
        return message

    @tool(effect="write", parallel_safe=False, retry_on_timeout=False, keywords="write save create new export report")
    def write_file(path: str, content: str, overwrite: bool = True) -> str:
        """Create or replace a text file (undoable). To change part of a file, use edit_file.

        Args:
            path: relative to the workspace.
            content: the whole new text.
            overwrite: false: fail if the file exists.
        """
        plan = plan_write(path, content, overwrite)
        return apply(plan, "Created" if plan.new_file else "Overwrote")

    @tool(effect="write", parallel_safe=False, retry_on_timeout=False,
          keywords="edit fix change modify update rename refactor bug")
    def edit_file(path: str, old: str, new: str, count: Annotated[int, Field(ge=1, le=1000)] = 1) -> str:
        """Replace exact text in a text file (undoable). Read it first: old must match
        exactly, indentation included, and occur at most count times.

        Args:
            path: relative to the workspace.
            new: replacement ('' deletes).
            count: occurrences expected; all are replaced.
        """
        return apply(plan_edit(path, old, new, count), "Edited")

    write_file.metadata["preview"] = _previewer(write_file, plan_write)
    edit_file.metadata["preview"] = _previewer(edit_file, plan_edit)
    return [write_file, edit_file]


def _previewer(spec: ToolSpec, plan: Callable[..., _Plan]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def preview(arguments: dict[str, Any]) -> dict[str, Any]:
        """The change a call would make, as a diff, computed without writing."""
        given = arguments.get("path", "") if isinstance(arguments, dict) else ""
        try:
            validated = spec.args_model.model_validate(arguments if isinstance(arguments, dict) else {})
            result = plan(**validated.model_dump())
        except ToolError as exc:
            return {"path": str(given), "diff": "", "new_file": False, "summary": "", "error": str(exc)}
        except ValidationError as exc:
            return {"path": str(given), "diff": "", "new_file": False, "summary": "",
                    "error": f"invalid arguments: {exc.errors()[0].get('msg', exc)}"}
        diff, added, removed = result.diff()
        return {"path": result.rel, "diff": diff, "new_file": result.new_file,
                "summary": f"+{added} {MINUS}{removed}"}

    return preview


# checks ----------------------------------------------------------------------------
def _target(workspace: WorkspaceRoot, path: str, store: CheckpointStore | None) -> tuple[Path, str]:
    target = workspace.resolve(path)
    rel = workspace.relative(target)
    if target == workspace.root:
        raise ToolError("path must name a file, not the workspace root")
    parts = Path(rel).parts
    protected = next((p for p in parts if p in PROTECTED_DIRS), None)
    if protected is not None:
        raise ToolError(f"Refused path {path!r}: files under {protected}/ are not written by the agent "
                        "(version control and jupyter-brain's own data live there)")
    if store is not None and (target == store.root_dir or target.is_relative_to(store.root_dir)):
        raise ToolError(f"Refused path {path!r}: it is inside the checkpoint store")
    if target.is_dir():
        raise ToolError(f"{rel} is a folder; give a file path inside it")
    for parent in target.parents:
        if parent == workspace.root:
            break
        if parent.exists() and not parent.is_dir():
            raise ToolError(f"cannot create {rel}: {workspace.relative(parent)} is a file, not a folder")
    return target, rel


def _check_content(text: str, data: bytes) -> None:
    if "\x00" in text:
        raise ToolError("the content contains NUL characters; these tools write text only — "
                        "write binary data with run_python")
    if len(data) > MAX_WRITE_BYTES:
        raise ToolError(f"the new content is {human_size(len(data))}; these tools write at most "
                        f"{human_size(MAX_WRITE_BYTES)} — write large data with run_python")


def _existing_text(workspace: WorkspaceRoot, target: Path) -> tuple[str, str] | None:
    """(text, encoding) of the file now, or None when it does not exist."""
    if not target.exists():
        return None
    rel = workspace.relative(target)
    if not target.is_file():
        raise ToolError(f"{rel} is not a regular file (a pipe, socket or device); it cannot be written")
    size = target.stat().st_size
    if size > MAX_WRITE_BYTES:
        raise ToolError(f"{rel} is {human_size(size)}; these tools change files up to "
                        f"{human_size(MAX_WRITE_BYTES)} — edit large files with run_python")
    encoding = _text_encoding(target)
    if encoding is None:
        raise ToolError(f"{rel} is a binary file ({human_size(size)}); these tools only write text — "
                        "change it with run_python")
    raw = target.read_bytes()
    return raw.decode(encoding), encoding


def _line_count(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _where(plan: _Plan) -> str:
    if plan.before is None:
        return ""
    ranges = []
    for group in difflib.SequenceMatcher(None, plan.before.splitlines(), plan.after.splitlines(),
                                         autojunk=False).get_opcodes():
        tag, _, _, j1, j2 = group
        if tag == "equal":
            continue
        ranges.append(f"{j1 + 1}" if j2 - j1 <= 1 else f"{j1 + 1}–{j2}")
    if not ranges:
        return ""
    shown = ", ".join(ranges[:5]) + (", …" if len(ranges) > 5 else "")
    return f"; changed: line {shown}" if len(ranges) == 1 and "–" not in shown else f"; changed: lines {shown}"


# helpful errors ----------------------------------------------------------------------
def _numbered(lines: list[str], start: int, stop: int) -> str:
    start, stop = max(0, start), min(len(lines), stop)
    return "\n".join(f"{i + 1:>6}\t{lines[i][:300]}" for i in range(start, stop))


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset)


def _not_found(rel: str, text: str, old: str) -> str:
    lines = text.splitlines()
    message = f"old text not found in {rel}."
    if " ".join(old.split()) and " ".join(old.split()) in " ".join(text.split()):
        message += " It does appear with different whitespace or line breaks: copy it exactly, indentation included."
    probe = next((ln.strip() for ln in old.splitlines() if ln.strip()), old.strip())
    best, best_score = -1, 0.0
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(probe)
    for i, line in enumerate(lines[:20_000]):
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() <= best_score or matcher.quick_ratio() <= best_score:
            continue
        score = matcher.ratio()
        if score > best_score:
            best, best_score = i, score
    if best >= 0 and best_score >= 0.5:
        span = max(1, len(old.splitlines()))
        message += f" The closest text is near line {best + 1}:\n{_numbered(lines, best - 2, best + span + 2)}\n"
    else:
        message += f" Nothing similar either (the file has {len(lines)} line{'s' * (len(lines) != 1)}). "
    return message + "Read the file with read_file and copy the exact text into old."


def _too_many(rel: str, text: str, old: str, found: int, count: int) -> str:
    lines = text.splitlines()
    starts, at = [], text.find(old)
    while at != -1 and len(starts) < 5:
        starts.append(_line_of(text, at))
        at = text.find(old, at + max(1, len(old)))
    where = ", ".join(str(n + 1) for n in starts) + (", …" if found > len(starts) else "")
    shown = "\n".join(_numbered(lines, n, n + 1) for n in starts[:3])
    allowed = "once" if count == 1 else f"at most {count} times"
    return (f"old text is found {found} times in {rel} (lines {where}), but count allows it {allowed}:\n{shown}\n"
            f"Add surrounding lines to old so it matches only the place you mean, or pass count={found} to "
            "replace every occurrence.")
