"""Tools the model may call: typed Python functions with a pydantic-built JSON schema.

A tool is declared once, as an ordinary annotated function; its argument model,
JSON schema and description come from the signature and docstring, so what the model
is told and what is validated can never disagree.
"""

from __future__ import annotations

import inspect
import json
import re
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property, lru_cache
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, create_model
from pydantic.fields import FieldInfo

from .tool_models import shared_args_model
from .tool_schema import compact_schema

TOOL_CALL_TIMEOUT_S = 45.0

ToolEffect = Literal["read", "write", "execute"]
Permission = Literal["allow", "ask", "deny"]


class PermissionMode(str, Enum):
    """How tools that write or execute are gated. Read tools are always allowed."""

    READ_ONLY = "read-only"
    ASK = "ask"
    AUTO = "auto"

    @classmethod
    def parse(cls, value: PermissionMode | str) -> PermissionMode:
        if isinstance(value, PermissionMode):
            return value
        try:
            return cls(str(value).strip().lower().replace("_", "-"))
        except ValueError:
            choices = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown permission mode {value!r}; choose one of: {choices}") from None


class ToolError(Exception):
    """A tool failed in a way the model should hear about and may retry."""


class NonRetryableToolError(ToolError):
    """A tool failed for good: it is blocked for the rest of the turn."""


_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()


@dataclass
class ToolSpec:
    name: str
    description: str
    fn: Callable[..., Any]
    args_model: type[BaseModel]
    effect: ToolEffect = "read"
    metadata: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        """JSON schema of the arguments, compact (``tool_schema.py``), built once per argument
        model: pydantic schema generation is slow, and specs that share a model (each cell's
        fresh built-in tools, each harness's ``read_artifact``) share its schema."""
        schema = _SCHEMAS.get(self.args_model)
        if schema is None:
            schema = compact_schema(self.args_model.model_json_schema())
            _SCHEMAS[self.args_model] = schema
        return schema

    def schema(self) -> dict[str, Any]:
        """The provider-neutral tool schema offered to the model."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    @property
    def timeout_s(self) -> float:
        return float(self.metadata.get("tool_timeout_s", TOOL_CALL_TIMEOUT_S))

    @property
    def retry_on_timeout(self) -> bool:
        return bool(self.metadata.get("retry_on_timeout", True))

    @property
    def parallel_safe(self) -> bool:
        """Read tools may run beside each other; writes and executions run alone, in order."""
        return bool(self.metadata.get("parallel_safe", self.effect == "read"))

    @property
    def inline(self) -> bool:
        """Run on the caller's thread (``@tool(inline=True)``), for tools that are fast and
        cannot block: it saves the hand-off to a worker thread, but nothing times it out."""
        return bool(self.metadata.get("inline", False))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:  # stable: no function address in notebooks or tool output
        return f"ToolSpec(name={self.name!r}, effect={self.effect!r})"

    def invoke(self, validated: BaseModel) -> Any:
        return self.fn(**{name: getattr(validated, name) for name in type(validated).model_fields})


def format_tool_output(value: Any) -> str:
    """What the model reads back: strings verbatim, JSON where possible, repr otherwise."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=_json_default)
    except (TypeError, ValueError):
        return repr(value)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    raise TypeError


# "name: text" / "name (type): text" (Google) or "name : type" (NumPy, text on the next lines).
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)(?:\s*\([^)]*\))?(\s*):\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google/NumPy-ish docstring into its description and per-argument text."""
    description, params = _parsed_docstring(doc or "")
    return description, dict(params)


@lru_cache(maxsize=1024)  # the notebook's tools are made afresh every cell, from the same docstrings
def _parsed_docstring(doc: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    doc = inspect.cleandoc(doc)
    lines = doc.splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section = "desc"
    current: str | None = None
    arg_indent: int | None = None  # indentation of the last argument line
    for line in lines:
        header = line.strip().lower().rstrip(":")
        if header in ("args", "arguments", "parameters", "params"):
            section, current = "args", None
            continue
        if header in ("returns", "return", "raises", "yields", "examples", "example", "notes"):
            section, current = "other", None
            continue
        if section == "desc":
            description.append(line)
        elif section == "args":
            if set(line.strip()) <= {"-"}:
                continue
            match = _ARG_LINE.match(line)
            indent = len(line) - len(line.lstrip())
            if match and (current is None or arg_indent is None or indent <= arg_indent):
                current = match.group(1).lstrip("*")
                numpy_type = bool(match.group(2))  # "path : str": the rest is a type, not text
                params[current] = "" if numpy_type else match.group(3).strip()
                arg_indent = indent
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
    return "\n".join(description).strip(), tuple(params.items())


def _args_model(fn: Callable[..., Any], name: str, param_docs: dict[str, str]) -> type[BaseModel]:
    signature = inspect.signature(fn)
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception:  # noqa: BLE001 - evaluating annotations runs their code: fall back to raw annotations
        hints = {}
    fields: dict[str, Any] = {}
    for pname, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(pname, param.annotation)
        if annotation is inspect.Parameter.empty:
            annotation = Any
        default = param.default
        if isinstance(default, FieldInfo):
            info = default
        else:
            info = FieldInfo.from_annotated_attribute(
                annotation, ... if default is inspect.Parameter.empty else default
            )
        if info.description is None and param_docs.get(pname):
            info.description = param_docs[pname]
        fields[pname] = (annotation, info)
    model_name = "".join(part.capitalize() for part in re.split(r"[^0-9a-zA-Z]+", name)) + "Args"
    return create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    effect: ToolEffect = "read",
    tool_timeout_s: float = TOOL_CALL_TIMEOUT_S,
    retry_on_timeout: bool = True,
    **metadata: Any,
) -> Any:
    """Turn a typed function into a ``ToolSpec``.

    ``effect`` says whether the tool only reads (always allowed) or writes / executes
    (gated by the permission mode). Usable bare (``@tool``) or with options. A tool runs on
    a worker thread so that ``tool_timeout_s`` can stop waiting for it; ``inline=True``
    runs it on the caller's thread instead (no timeout: only for tools that cannot hang).
    """

    def wrap(func: Callable[..., Any]) -> ToolSpec:
        tool_name = name or func.__name__
        doc_description, param_docs = _parse_docstring(func.__doc__ or "")
        meta = {"tool_timeout_s": float(tool_timeout_s), "retry_on_timeout": retry_on_timeout}
        meta.update(metadata)
        return ToolSpec(
            name=tool_name,
            description=description or doc_description or tool_name.replace("_", " "),
            fn=func,
            args_model=shared_args_model(func, tool_name, param_docs,  # one per definition
                                         lambda: _args_model(func, tool_name, param_docs)),
            effect=effect,
            metadata=meta,
        )

    return wrap(fn) if fn is not None else wrap


class AgentToolRegistry:
    """The tools a harness may offer, and the rules for which may run without asking."""

    def __init__(
        self,
        tools: Iterable[ToolSpec | Callable[..., Any]] = (),
        *,
        permission_mode: PermissionMode | str = PermissionMode.ASK,
    ) -> None:
        self._tools: dict[str, ToolSpec] = {}
        self.permission_mode = PermissionMode.parse(permission_mode)
        self._overrides: dict[str, Permission] = {}
        for t in tools:
            self.register(t)

    def register(self, spec: ToolSpec | Callable[..., Any]) -> ToolSpec:
        resolved: ToolSpec = spec if isinstance(spec, ToolSpec) else tool(spec)
        self._tools[resolved.name] = resolved
        return resolved

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> ToolSpec | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        chosen = self._tools.values() if names is None else [self._tools[n] for n in names if n in self._tools]
        return [spec.schema() for spec in chosen]

    def selection_hints(self) -> tuple[list[str], dict[str, str]]:
        """For semantic selection: the tools offered whatever the prompt
        (``@tool(always_offered=True)``) and the words each is found by (``keywords=``)."""
        always = [name for name, spec in self._tools.items() if spec.metadata.get("always_offered")]
        words = {name: str(spec.metadata["keywords"]) for name, spec in self._tools.items()
                 if spec.metadata.get("keywords")}
        return always, words

    def copy(self) -> AgentToolRegistry:
        clone = AgentToolRegistry(self._tools.values(), permission_mode=self.permission_mode)
        clone._overrides = dict(self._overrides)
        return clone

    # permissions -------------------------------------------------------------
    def allow(self, name: str) -> None:
        self._overrides[name] = "allow"

    def deny(self, name: str) -> None:
        self._overrides[name] = "deny"

    def clear_override(self, name: str) -> None:
        self._overrides.pop(name, None)

    @property
    def overrides(self) -> dict[str, Permission]:
        return dict(self._overrides)

    def permission_for(self, name: str) -> Permission:
        """allow / ask / deny for one tool under the current mode and overrides.

        Read-only mode is absolute: a per-tool "allow" never lets a writing or executing
        tool run in it (a "deny" always applies).
        """
        spec = self._tools.get(name)
        if spec is None:
            return "deny"
        if spec.effect != "read" and self.permission_mode is PermissionMode.READ_ONLY:
            return "deny"
        if name in self._overrides:
            return self._overrides[name]
        if spec.effect == "read":
            return "allow"
        if self.permission_mode is PermissionMode.READ_ONLY:
            return "deny"
        if self.permission_mode is PermissionMode.AUTO:
            return "allow"
        return "ask"
