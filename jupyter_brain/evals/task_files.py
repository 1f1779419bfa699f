"""Reading a task file from disk: YAML, JSONL (JSON), or DSEval's problem format.

Kept apart from ``tasks.py`` (the models) and ``dseval.py`` (which builds on them), so the
one function that picks a reader by the file's type imports both without a circle.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .dseval import load_dseval
from .tasks import TaskFile, TaskFileError, parse_task_file


def _yaml(text: str, name: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        raise TaskFileError(f"{name}: not valid YAML: {at}{getattr(exc, 'problem', None) or exc}") from None


def _jsonl(text: str, name: str) -> dict[str, Any]:
    tasks: list[Any] = []
    configs: list[Any] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TaskFileError(f"{name}: line {number} is not JSON ({exc.msg})") from None
        if isinstance(entry, dict) and set(entry) == {"configs"}:
            configs.extend(entry["configs"] if isinstance(entry["configs"], list) else [entry["configs"]])
        else:
            tasks.append(entry)
    return {"tasks": tasks, "configs": configs}


def load_task_file(path: str | Path) -> TaskFile:
    """Read a task file: ``.yaml``/``.yml``, ``.jsonl``/``.json``, or DSEval's format."""
    path = Path(path)
    name = path.name
    if path.is_dir() or path.suffix == ".py":
        return load_dseval(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFileError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if path.suffix == ".jsonl":
        data: Any = _jsonl(text, name)
    elif path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TaskFileError(f"{name}: not valid JSON: line {exc.lineno}: {exc.msg}") from None
    elif path.suffix in (".yaml", ".yml"):
        data = _yaml(text, name)
    else:
        raise TaskFileError(f"{name}: unknown task file type {path.suffix!r} (use .yaml, .jsonl, or DSEval's .py)")
    return parse_task_file(data, name)
