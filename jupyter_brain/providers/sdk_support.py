"""Helpers shared by the SDK-backed providers: error mapping and tool-argument parsing.

The ``anthropic`` and ``openai`` SDKs share one generated exception layout
(``APIStatusError`` with ``status_code``, ``APIConnectionError``, ``APITimeoutError``),
so one mapper serves both. It works by attribute and class name rather than by
importing either SDK, so importing this module stays cheap.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from jupyter_brain.providers.base import Message, ProviderError, ProviderErrorKind, ToolSchema


def transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP-layer exception types a half-read stream can raise (httpx2 and httpx): only
    of the libraries already imported (an SDK imports its own before its client is built),
    since a library never imported raises nothing, and importing it costs the first turn (#40)."""
    found: list[type[BaseException]] = []
    for module_name in ("httpx2", "httpx"):
        error = getattr(sys.modules.get(module_name), "TransportError", None)
        if isinstance(error, type) and issubclass(error, BaseException):
            found.append(error)
    return tuple(found)


def kind_for_status(status: int, error_type: str | None = None) -> ProviderErrorKind:
    if error_type == "overloaded_error" or status == 529:
        return "overloaded"
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server"
    if 400 <= status < 500:
        return "bad_request"
    return "other"


def error_type_of(body: Any) -> str | None:
    """``error.type`` (Anthropic) or ``type`` / ``code`` (OpenAI) from an error body."""
    if not isinstance(body, dict):
        return None
    inner = body.get("error", body)
    if isinstance(inner, dict):
        value = inner.get("type") or inner.get("code")
        return value if isinstance(value, str) else None
    return None


def message_of(err: BaseException, body: Any) -> str:
    """The API's own error message when there is one, else the exception text."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
    if isinstance(body, str) and body.strip():  # a plain-text error body (tinyq4's 4xx): say why, on one line
        return f"{str(err) or type(err).__name__}: {' '.join(body.split())[:500]}"
    return str(err) or type(err).__name__


def map_sdk_error(err: BaseException, provider: str, *, mid_stream: bool = False) -> ProviderError:
    """Translate an SDK or transport exception into a ``ProviderError``.

    ``mid_stream`` marks failures after the response began: an ``error`` event sent with
    HTTP 200 is a stream failure (or ``overloaded``), not a bad request.
    """
    if isinstance(err, ProviderError):
        return err
    name = type(err).__name__
    body = getattr(err, "body", None)
    status = getattr(err, "status_code", None)
    error_type = error_type_of(body)
    message = message_of(err, body)
    if "Timeout" in name:
        return ProviderError(message, kind="timeout", retryable=True, provider=provider)
    if isinstance(status, int) and status >= 400:
        kind = kind_for_status(status, error_type)
        retryable = kind in ("rate_limit", "overloaded", "server", "timeout")
        return ProviderError(
            message, kind=kind, status_code=status, retryable=retryable, provider=provider
        )
    if mid_stream and (error_type or status is not None or name == "APIError"):
        kind = "overloaded" if error_type == "overloaded_error" else "stream"
        return ProviderError(
            f"the model stream reported an error: {message}",
            kind=kind,
            retryable=kind == "overloaded",
            provider=provider,
        )
    if "Connection" in name or isinstance(err, transport_errors()):
        return ProviderError(
            f"connection to the model server failed or was dropped: {message}",
            kind="connection",
            retryable=True,
            provider=provider,
        )
    return ProviderError(message, kind="other", provider=provider)


def parse_arguments(raw: str) -> tuple[Any, str | None]:
    """Parsed tool input, or ``({}, raw)`` when the streamed JSON is not an object.

    A model can emit broken argument JSON (or be cut off by max_tokens); the executor
    reports that precisely to the model instead of failing the turn.
    """
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError:
        return {}, raw
    if not isinstance(value, dict):
        return {}, raw
    return value, None


def estimate_tokens(messages: list[Message], tools: list[ToolSchema]) -> int:
    """About four characters a token; only for when no count endpoint answers."""
    # An image counts as a fixed ~1,000 tokens (foundation.tokens.IMAGE_TOKENS), never its base64.
    chars = sum(len(json.dumps({k: v for k, v in m.items() if k != "images"}, default=str))
                + 4_000 * len(m.get("images") or ()) for m in messages)
    chars += sum(len(json.dumps(t, default=str)) for t in tools)
    return chars // 4


def guarded(
    stream: Iterable[Any],
    sdk_error: type[BaseException],
    to_error: Callable[..., ProviderError],
) -> Iterator[Any]:
    """The stream's items, with an SDK or transport failure mid-stream raised as ProviderError."""
    iterator = iter(stream)
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return
        except (sdk_error, *transport_errors()) as err:
            raise to_error(err, mid_stream=True) from None
        yield item
