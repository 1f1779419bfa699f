"""Request bodies checked against the official SDKs' own request types.

The mock servers (``mock_servers.py``) run every POST body they receive through
``request_problems``: ``/v1/messages`` against ``anthropic.types``'
``MessageCreateParamsStreaming`` / ``MessageCreateParamsNonStreaming``,
``/v1/messages/count_tokens`` against ``MessageCountTokensParams`` and
``/v1/chat/completions`` against ``openai.types.chat``'s
``CompletionCreateParamsStreaming`` / ``CompletionCreateParamsNonStreaming``. Those
TypedDicts are what the SDKs type-check our calls with and are generated from the
published API specifications, so a body they do not describe is one the real API would
answer with a 400.

The check walks the body against the TypedDicts' annotations rather than through
pydantic's ``TypeAdapter``: pydantic validates ``Iterable[...]`` fields (``messages``,
every ``content`` list) lazily, so their items would go unchecked, and it ignores
unknown keys in TypedDicts. Here, as the APIs do:

- an unknown key is an error (``messages[2].reasoning_content: unexpected field``);
- a missing ``Required`` key is an error;
- JSON types are strict: a bool is not an int, a number is not a string (an int is a
  float, as in JSON);
- a union of content blocks is matched by its ``type`` field, and the problems shown
  are those of the block the body meant.

Paths name the bad field from the body's root: ``messages[1].content[0].tool_use_id``.

Some OpenAI-compatible servers take fields of their own. A dialect (``DIALECTS``) lists,
per SDK TypedDict, exactly the extra fields one server documents, each with the reason;
the plain ``"openai"`` dialect takes none.
"""

from __future__ import annotations

import collections.abc
import functools
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, Union

import typing_extensions

# A TypedDict class -> its extra fields (name -> annotation) a server accepts.
Extensions = dict[type, dict[str, Any]]


@dataclass(frozen=True)
class Problem:
    path: str  # e.g. "messages[1].content[0].tool_use_id" ("" for the body itself)
    message: str

    def __str__(self) -> str:
        return f"{self.path or '<body>'}: {self.message}"


# -- the SDKs' request types ----------------------------------------------------------------


@functools.cache
def _request_types() -> dict[str, tuple[type, type, str]]:
    """Endpoint -> (type when ``stream`` is true, type otherwise, what it is)."""
    from anthropic.types import message_count_tokens_params, message_create_params
    from openai.types.chat import completion_create_params

    messages = (message_create_params.MessageCreateParamsStreaming,
                message_create_params.MessageCreateParamsNonStreaming, "Anthropic Messages")
    count = message_count_tokens_params.MessageCountTokensParams
    chat = (completion_create_params.CompletionCreateParamsStreaming,
            completion_create_params.CompletionCreateParamsNonStreaming, "OpenAI Chat Completions")
    return {
        "/v1/messages": messages,
        "/v1/messages/count_tokens": (count, count, "Anthropic count_tokens"),
        "/v1/chat/completions": chat,
    }


def _deepseek() -> Extensions:
    from openai.types.chat import ChatCompletionAssistantMessageParam

    return {
        # DeepSeek's thinking mode wants the reasoning of a tool-call step back on its
        # assistant message ("Missing `reasoning_content` field in the assistant message"),
        # https://api-docs.deepseek.com/guides/thinking_mode#tool-calls
        ChatCompletionAssistantMessageParam: {"reasoning_content": str},
    }


# Dialect name -> the extensions it accepts. Only what a server documents and our
# provider sends belongs here.
DIALECTS: dict[str, collections.abc.Callable[[], Extensions]] = {
    "openai": dict,
    "deepseek": _deepseek,
}


@functools.cache
def dialect_extensions(dialect: str) -> Extensions:
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; choose one of {sorted(DIALECTS)}")
    return DIALECTS[dialect]()


def request_types() -> list[type]:
    """The SDK types request bodies are checked against."""
    return list(dict.fromkeys(t for streaming, other, _ in _request_types().values() for t in (streaming, other)))


def request_problems(path: str, body: Any, dialect: str = "openai") -> tuple[list[Problem], str]:
    """The problems of a POST body to ``path`` and the type it was checked against
    (no problems and ``""`` for a path with no request type)."""
    found = _request_types().get(path)
    if found is None:
        return [], ""
    streaming, other, api = found
    tp = streaming if isinstance(body, dict) and body.get("stream") is True else other
    extensions = dialect_extensions(dialect) if path == "/v1/chat/completions" else {}
    return problems(body, tp, extensions), f"{api} ({tp.__module__}.{tp.__qualname__})"


def problems(value: Any, tp: Any, extensions: Extensions | None = None) -> list[Problem]:
    """Where ``value`` (parsed JSON) does not fit the annotation ``tp``."""
    return _Walker(extensions or {}).check(value, tp, "")


# -- the walk -------------------------------------------------------------------------------

_WRAPPERS = {typing.Required, typing.NotRequired, typing_extensions.Required, typing_extensions.NotRequired,
             getattr(typing, "ReadOnly", None), getattr(typing_extensions, "ReadOnly", None)} - {None}
_LISTS = {list, collections.abc.Iterable, collections.abc.Sequence, collections.abc.MutableSequence,
          collections.abc.Collection}
_DICTS = {dict, collections.abc.Mapping, collections.abc.MutableMapping}
_SCALARS: dict[Any, tuple[type, ...]] = {str: (str,), int: (int,), float: (int, float), bool: (bool,)}


def _strip(tp: Any) -> Any:
    """The annotation without ``Required`` / ``NotRequired`` / ``ReadOnly`` / ``Annotated``
    wrappers or type aliases."""
    while True:
        origin = typing_extensions.get_origin(tp)
        if origin in _WRAPPERS or origin is typing_extensions.Annotated:
            tp = typing_extensions.get_args(tp)[0]
        elif isinstance(tp, typing_extensions.TypeAliasType):
            tp = tp.__value__
        else:
            return tp


def _is_union(tp: Any) -> bool:
    return typing_extensions.get_origin(tp) in (Union, types.UnionType)


@functools.cache
def _fields(cls: type) -> tuple[dict[str, Any], frozenset[str]]:
    """A TypedDict's fields (name -> annotation) and its required keys, resolved.

    The SDKs write their annotations as strings (``from __future__ import annotations``),
    which hides ``Required[...]`` from ``__required_keys__``: a key is required when its
    resolved annotation says ``Required``, or when its class is total and it is not
    ``NotRequired``.
    """
    hints = typing_extensions.get_type_hints(cls, include_extras=True)
    required = set()
    for name, hint in hints.items():
        origin = typing_extensions.get_origin(hint)
        if origin in (typing.Required, typing_extensions.Required):
            required.add(name)
        elif origin not in (typing.NotRequired, typing_extensions.NotRequired) and name in cls.__required_keys__:
            required.add(name)
    return hints, frozenset(required)


def _tags(cls: type, key: str) -> tuple[Any, ...] | None:
    """The values a TypedDict's ``key`` takes, when that field is a Literal."""
    hint = _fields(cls)[0].get(key)
    if hint is None:
        return None
    hint = _strip(hint)
    return typing_extensions.get_args(hint) if typing_extensions.get_origin(hint) is Literal else None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _name(tp: Any) -> str:
    tp = _strip(tp)
    if tp is type(None) or tp is None:
        return "null"
    if _is_union(tp):
        return " | ".join(dict.fromkeys(_name(a) for a in typing_extensions.get_args(tp)))
    origin = typing_extensions.get_origin(tp)
    if origin is Literal:
        return " | ".join(repr(a) for a in typing_extensions.get_args(tp))
    if origin in _LISTS:
        return "array"
    if tp in _DICTS or origin in _DICTS or typing_extensions.is_typeddict(tp):
        return "object"
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(tp, getattr(tp, "__name__", str(tp)))


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


# Annotation id -> (annotation, what is derived from it): the SDK modules keep the
# annotations alive, and the entry holds a reference too, so an id is never reused.
_FORMS: dict[int, tuple[Any, tuple[str, Any]]] = {}
_UNIONS: dict[int, tuple[Any, _UnionPlan]] = {}


def _form(tp: Any) -> tuple[str, Any]:
    """What an annotation asks of a JSON value: (form, the annotation without wrappers)."""
    cached = _FORMS.get(id(tp))
    if cached is None:
        cached = _FORMS[id(tp)] = (tp, _read_form(tp))
    return cached[1]


def _read_form(tp: Any) -> tuple[str, Any]:
    tp = _strip(tp)
    origin = typing_extensions.get_origin(tp)
    if tp is Any or tp is object:
        return "any", tp
    if tp is None or tp is type(None):
        return "null", tp
    if _is_union(tp):
        return "union", tp
    if origin is Literal:
        return "literal", tp
    if tp in _SCALARS:
        return "scalar", tp
    if typing_extensions.is_typeddict(tp):
        return "typeddict", tp
    if tp in _LISTS or origin in _LISTS:
        return "list", tp
    if tp in _DICTS or origin in _DICTS:
        return "dict", tp
    if isinstance(tp, type) or isinstance(origin, type):  # IO[bytes], PathLike: no JSON value is one
        return "foreign", tp
    raise TypeError(f"request_validation cannot read the annotation {tp!r}")


def unreadable_annotations(root: Any) -> list[str]:
    """The annotations reachable from ``root`` that the walk cannot read (none, until an
    SDK release brings a new typing construct: the test of this module looks)."""
    seen: set[int] = set()
    bad: list[str] = []
    stack = [root]
    while stack:
        tp = stack.pop()
        if id(tp) in seen:
            continue
        seen.add(id(tp))
        try:
            form, tp = _form(tp)
        except TypeError as err:
            bad.append(str(err))
            continue
        if form == "typeddict":
            stack += _fields(tp)[0].values()
        elif form in ("union", "list", "dict"):
            stack += typing_extensions.get_args(tp)
    return bad


class _Walker:
    def __init__(self, extensions: Extensions) -> None:
        self.extensions = extensions

    def check(self, value: Any, tp: Any, path: str) -> list[Problem]:
        form, tp = _form(tp)
        if form == "any":
            return []
        if form == "null":
            return [] if value is None else [Problem(path, f"expected null, got {_kind(value)}")]
        if form == "union":
            return self._union(value, tp, path)
        if form == "literal":
            if any(value == a and type(value) is type(a) for a in typing_extensions.get_args(tp)):
                return []
            return [Problem(path, f"expected {_name(tp)}, got {value!r}")]
        if form == "scalar":
            ok = isinstance(value, _SCALARS[tp]) and (tp is bool or not isinstance(value, bool))
            return [] if ok else [Problem(path, f"expected {_name(tp)}, got {_kind(value)}")]
        if form == "typeddict":
            return self._typed_dict(value, tp, path)
        if form == "list":
            if not isinstance(value, list):
                return [Problem(path, f"expected array, got {_kind(value)}")]
            (item,) = typing_extensions.get_args(tp) or (Any,)
            return [p for i, v in enumerate(value) for p in self.check(v, item, _join(path, i))]
        if form == "dict":
            if not isinstance(value, dict):
                return [Problem(path, f"expected object, got {_kind(value)}")]
            _, item = typing_extensions.get_args(tp) or (str, Any)
            return [p for k, v in value.items() for p in self.check(v, item, _join(path, k))]
        return [Problem(path, f"expected {_name(tp)}, got {_kind(value)}")]  # "foreign"

    def _typed_dict(self, value: Any, cls: type, path: str) -> list[Problem]:
        if not isinstance(value, dict):
            return [Problem(path, f"expected object ({cls.__name__}), got {_kind(value)}")]
        hints, required = _fields(cls)
        extra = self.extensions.get(cls, {})
        found = [Problem(_join(path, k), f"required field missing ({cls.__name__})")
                 for k in sorted(required - value.keys())]
        for key, item in value.items():
            if key in hints:
                found += self.check(item, hints[key], _join(path, key))
            elif key in extra:
                found += self.check(item, extra[key], _join(path, key))
            else:
                found.append(Problem(_join(path, key), f"unexpected field ({cls.__name__} has no {key!r})"))
        return found

    def _union(self, value: Any, tp: Any, path: str) -> list[Problem]:
        plan = _union_plan(tp)
        candidates = plan.members
        if isinstance(value, dict) and plan.key is not None:
            # A union of typed blocks (or of message roles): the member the body meant is
            # the one its ``type`` (``role``) names.
            tag = value.get(plan.key)
            meant = [m for m, tags in plan.tags if tag in tags]
            if not meant:
                got = repr(tag) if plan.key in value else "none"
                return [Problem(_join(path, plan.key), f"expected one of {plan.names}; got {got}")]
            candidates = meant
        best: list[Problem] | None = None
        for m in candidates:
            found = self.check(value, m, path)
            if not found:
                return []
            if all(p.path == path and p.message.startswith("expected") for p in found):
                continue  # a member of another kind (a string where an array came, …)
            if best is None or len(found) < len(best):
                best = found
        # The closest member of the value's kind, else one problem naming what would fit.
        shown = repr(value) if isinstance(value, (str, int, float)) and len(repr(value)) < 40 else _kind(value)
        return best or [Problem(path, f"expected {plan.kinds}, got {shown}")]


@dataclass(frozen=True)
class _UnionPlan:
    members: list[Any]  # flattened, without wrappers
    key: str | None  # the field that tells dict members apart ("type" / "role"), if one does
    tags: list[tuple[Any, tuple[Any, ...]]]  # (TypedDict member, the values its ``key`` takes)
    names: str  # all those values, for the message
    kinds: str  # what the union takes, for the message


def _union_plan(tp: Any) -> _UnionPlan:
    cached = _UNIONS.get(id(tp))
    if cached is None:
        cached = _UNIONS[id(tp)] = (tp, _read_union(tp))
    return cached[1]


def _read_union(tp: Any) -> _UnionPlan:
    members: list[Any] = []
    for m in typing_extensions.get_args(tp):
        m = _strip(m)
        members += [_strip(a) for a in typing_extensions.get_args(m)] if _is_union(m) else [m]
    kinds = " | ".join(dict.fromkeys(map(_name, members)))
    dicts = [m for m in members if typing_extensions.is_typeddict(m)]
    loose = any(m in (Any, object) or m in _DICTS or typing_extensions.get_origin(m) in _DICTS for m in members)
    if dicts and not loose:  # a plain Dict member takes any object: no field tells them apart
        for key in ("type", "role"):
            tags = [(m, _tags(m, key)) for m in dicts]
            if all(t is not None for _, t in tags):
                names = ", ".join(sorted({repr(v) for _, t in tags for v in t or ()}))
                return _UnionPlan(members, key, [(m, t or ()) for m, t in tags], names, kinds)
    return _UnionPlan(members, None, [], "", kinds)
