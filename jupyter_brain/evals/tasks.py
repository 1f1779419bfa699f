"""Eval-set files: tasks (setup, prompt, checks) and the configs to run them under.

A task file is YAML (a list of tasks, or a mapping with ``tasks`` and optional ``name``
and ``configs``) or JSONL (one task per line; a line ``{"configs": [...]}`` names the
configs); ``task_files.load_task_file`` reads the files, DSEval's problem files too
(``evals/dseval.py``). Every entry is checked here, with
pydantic, before anything runs: a bad file is one ``TaskFileError`` line naming the file,
the entry (its ``id`` when it has one) and the field, never a traceback.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..settings import CONFIG_KEYS


class TaskFileError(ValueError):
    """A task file that cannot be read, as one line: where (entry, field) and what."""


def _as_list(value: Any) -> Any:
    if value is None:
        return []
    return [value] if isinstance(value, str) else value


class EvalTask(BaseModel):
    """One task: ``setup`` runs in a fresh copy of the namespace, then the agent gets
    ``prompt``; it passes when every check does (``expect`` texts, ``check`` expressions,
    the optional ``judge`` rubric, and, for DSEval problems, the ``reference`` code's result)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    setup: str = ""
    expect: list[str] = Field(default_factory=list)
    check: list[str] = Field(default_factory=list)
    judge: str | None = None
    reference: str = ""  # DSEval: the reference solution (its result and the names it sets)
    reference_names: list[str] = Field(default_factory=list)  # DSEval's namespace_check names
    tags: list[str] = Field(default_factory=list)

    _lists = field_validator("expect", "check", "tags", "reference_names", mode="before")(
        classmethod(lambda cls, v: _as_list(v)))

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @field_validator("setup", "reference")
    @classmethod
    def _compiles(cls, code: str) -> str:
        try:
            compile(code, "<setup>", "exec")
        except SyntaxError as exc:
            raise ValueError(f"not valid Python (line {exc.lineno}: {exc.msg})") from None
        return code

    @field_validator("check")
    @classmethod
    def _expressions(cls, checks: list[str]) -> list[str]:
        for expression in checks:
            try:
                compile(expression, "<check>", "eval")
            except SyntaxError as exc:
                raise ValueError(f"{expression!r} is not a Python expression ({exc.msg})") from None
        return checks

    @property
    def has_checks(self) -> bool:
        return bool(self.expect or self.check or self.judge is not None or self.reference)


class EvalConfig(BaseModel):
    """A named set of settings a task runs under: ``{name: cot-high, strategy: cot, think: high}``.
    Any ``%agent config`` key is allowed (``strategy``, ``think``, ``model``, ``provider``,
    ``max_steps`` …); a bare name (``react``) is the strategy of that name."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    flags: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"name": value, "flags": {"strategy": value}}
        if not isinstance(value, dict) or "flags" in value:
            return value
        rest = {k.replace("-", "_"): v for k, v in value.items() if k != "name"}
        unknown = sorted(k for k in rest if k not in CONFIG_KEYS)
        if unknown:
            raise ValueError(f"unknown setting {', '.join(unknown)} (settings: {', '.join(CONFIG_KEYS)})")
        return {"name": value.get("name") or rest.get("strategy") or "", "flags": rest}

    @model_validator(mode="after")
    def _valid_values(self) -> EvalConfig:
        from ..settings_model import AgentOptions

        try:
            AgentOptions(**self.flags)
        except ValidationError as exc:
            raise ValueError("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None
        return self

    @property
    def strategy(self) -> str | None:
        return self.flags.get("strategy")


class TaskFile(BaseModel):
    """A whole file: its tasks (ids unique) and the configs it names (may be none)."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    configs: list[EvalConfig] = Field(default_factory=list)
    tasks: list[EvalTask] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> TaskFile:
        for what, names in (("task id", [t.id for t in self.tasks]), ("config name", [c.name for c in self.configs])):
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"{what} {', '.join(map(repr, twice))} appears more than once")
        return self

    def select(self, ids: list[str]) -> TaskFile:
        """Only the tasks named (in the file's order); an unknown id is an error."""
        unknown = [i for i in ids if i not in {t.id for t in self.tasks}]
        if unknown:
            raise TaskFileError(f"{self.name}: no task {', '.join(map(repr, unknown))}")
        return self.model_copy(update={"tasks": [t for t in self.tasks if t.id in ids]})


def where(loc: tuple[Any, ...], data: Any) -> str:
    """pydantic's error path as the reader knows it: ``tasks[3] (id 'mean') → check[0]``."""
    parts: list[str] = []
    node = data
    for i, part in enumerate(loc):
        if isinstance(part, int):
            label = f"{parts.pop() if parts else ''}[{part}]"
            entry = node[part] if isinstance(node, list) and part < len(node) else None
            if i == 1 and isinstance(entry, dict) and entry.get("id" if loc[0] == "tasks" else "name"):
                key = "id" if loc[0] == "tasks" else "name"
                label += f" ({key} {entry[key]!r})"
            parts.append(label)
            node = entry
        else:
            parts.append(str(part))
            node = node.get(part) if isinstance(node, dict) else None
    return " → ".join(parts)


def parse_task_file(data: Any, name: str) -> TaskFile:
    """``data`` (a list of tasks, or ``{tasks, configs, name}``) as a checked ``TaskFile``."""
    if isinstance(data, list):
        data = {"tasks": data}
    if not isinstance(data, dict):
        raise TaskFileError(f"{name}: expected a list of tasks or a mapping with 'tasks', got {type(data).__name__}")
    data = {"name": name, **data}
    try:
        return TaskFile.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        message = str(first["msg"]).removeprefix("Value error, ")
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        place = where(tuple(first["loc"]), data)
        raise TaskFileError(f"{name}: {place + ': ' if place else ''}{message}{more}") from None
