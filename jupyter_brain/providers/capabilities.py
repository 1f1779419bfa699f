"""Optional provider capabilities, declared as Protocols instead of guessed with getattr.

``LLMProvider`` (in ``base.py``) is what every backend must do. These are what some
backends can do beyond it; callers check with ``isinstance`` and fall back cleanly.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .base import Message, ToolSchema


@runtime_checkable
class NativeThinking(Protocol):
    """The API has its own thinking channel (Anthropic's extended thinking), so the think
    level becomes a token budget instead of ``<think>`` instructions in the prompt."""

    supports_native_thinking: bool


@runtime_checkable
class ExactTokenCount(Protocol):
    """The API can count a request's input tokens exactly before it is sent."""

    def exact_input_tokens(self, messages: list[Message], tools: list[ToolSchema]) -> int | None: ...


@runtime_checkable
class Cloneable(Protocol):
    """Instances carry per-run state (a script cursor), so concurrent runs need copies."""

    def clone(self) -> Any: ...


@runtime_checkable
class HoldsApiKey(Protocol):
    """The provider was configured with a key, which every view must mask."""

    api_key: str | None


def has_native_thinking(provider: Any) -> bool:
    return isinstance(provider, NativeThinking) and bool(provider.supports_native_thinking)


def clone_for_run(provider: Any) -> Any:
    """A fresh copy where the provider keeps per-run state; the instance itself otherwise
    (the SDK-backed providers are thread-safe HTTP clients, shared by concurrent runs)."""
    return provider.clone() if isinstance(provider, Cloneable) else provider


def provider_secrets(provider: Any) -> tuple[str, ...]:
    """The configured key(s) of a provider, for masking."""
    key = provider.api_key if isinstance(provider, HoldsApiKey) else None
    return (key,) if isinstance(key, str) and key else ()
