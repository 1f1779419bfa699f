"""Optional provider capabilities, declared as Protocols instead of guessed with getattr.

``LLMProvider`` (in ``base.py``) is what every backend must do. These are what some
backends can do beyond it; callers check with ``isinstance`` and fall back cleanly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from .base import Message, ToolSchema

_MISSING = object()
_MEMBERS: dict[type, tuple[tuple[str, bool], ...]] = {}  # protocol -> (member, is a method)


class _Capability(type(Protocol)):  # type: ignore[misc]
    """The metaclass of the protocols below: ``isinstance`` decides as typing's own check
    does (every member present; a method member not set to None), without its work per
    call: on Python 3.11 that walks the protocol's MRO each time (~20 µs), and these checks
    run for every turn and model call."""

    def __instancecheck__(cls, obj: Any) -> bool:
        members = _MEMBERS.get(cls)
        if members is None:
            names = list(cls.__dict__.get("__annotations__", {}))
            names += [n for n, v in cls.__dict__.items() if callable(v) and not n.startswith("_")]
            members = tuple((n, callable(getattr(cls, n, None))) for n in dict.fromkeys(names))
            _MEMBERS[cls] = members
        for name, is_method in members:
            value = getattr(obj, name, _MISSING)
            if value is _MISSING or (is_method and value is None):
                return cls in type(obj).__mro__  # a class that names the protocol as a base
        return True


@runtime_checkable
class NativeThinking(Protocol, metaclass=_Capability):
    """The API has its own thinking channel (Anthropic's extended thinking), so the think
    level becomes a token budget instead of ``<think>`` instructions in the prompt."""

    supports_native_thinking: bool


@runtime_checkable
class ExactTokenCount(Protocol, metaclass=_Capability):
    """The API can count a request's input tokens exactly before it is sent."""

    def exact_input_tokens(self, messages: list[Message], tools: list[ToolSchema]) -> int | None: ...


@runtime_checkable
class Cloneable(Protocol, metaclass=_Capability):
    """Instances carry per-run state (a script cursor), so concurrent runs need copies."""

    def clone(self) -> Any: ...


@runtime_checkable
class HoldsApiKey(Protocol, metaclass=_Capability):
    """The provider was configured with a key, which every view must mask."""

    api_key: str | None


@runtime_checkable
class Composite(Protocol, metaclass=_Capability):
    """A provider made of others (``ChainProvider``): their keys are its keys."""

    members: tuple[Any, ...]


@runtime_checkable
class ReportsFallbacks(Protocol, metaclass=_Capability):
    """Calls may be handed to another provider (a chain), each switch reported to the
    listener the caller sets here (``providers.chain.FallbackNotice``)."""

    on_fallback: Callable[[Any], None] | None


@runtime_checkable
class ServerWebSearch(Protocol, metaclass=_Capability):
    """The API runs a web search itself (Anthropic's ``web_search`` server tool): the
    schema it returns is offered beside the function tools, and the answer carries the
    searches, their citations and blocks to send back (``ProviderResult.server_tools``,
    ``.citations``, ``.native_content``)."""

    def web_search_tool(self, max_uses: int = ...) -> ToolSchema: ...


def server_web_search(provider: Any, max_uses: int = 5) -> ToolSchema | None:
    """The provider's server web search tool, or None when it has none."""
    return provider.web_search_tool(max_uses) if isinstance(provider, ServerWebSearch) else None


def has_native_thinking(provider: Any) -> bool:
    return isinstance(provider, NativeThinking) and bool(provider.supports_native_thinking)


def clone_for_run(provider: Any) -> Any:
    """A fresh copy where the provider keeps per-run state; the instance itself otherwise
    (the SDK-backed providers are thread-safe HTTP clients, shared by concurrent runs)."""
    return provider.clone() if isinstance(provider, Cloneable) else provider


def provider_secrets(provider: Any) -> tuple[str, ...]:
    """The configured key(s) of a provider, for masking."""
    if isinstance(provider, Composite):
        return tuple(k for member in provider.members for k in provider_secrets(member))
    key = provider.api_key if isinstance(provider, HoldsApiKey) else None
    return (key,) if isinstance(key, str) and key else ()
