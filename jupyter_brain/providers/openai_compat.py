"""OpenAI-compatible Chat Completions provider (OpenAI, Ollama, vLLM, LM Studio, …).

Streams with ``stream_options={"include_usage": True}`` so the last chunk carries usage.
How chunks become events is ``openai_chunks.py`` (reasoning fields, ``<think>`` tags,
content parts, tool-call deltas, usage); how messages go on the wire is
``openai_wire.py``; what differs between servers (sending ``reasoning_content`` back,
the error for a model the server does not serve) is ``openai_server.py``.

Without a model, local servers (the ``ollama`` / ``vllm`` presets, and ``openai`` with a
base URL but no key, as ``auto`` builds for ``OPENAI_BASE_URL`` alone) use the first
model the server lists at ``/v1/models``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from jupyter_brain.foundation.catalog import accepts_images
from jupyter_brain.providers import served_models
from jupyter_brain.providers.base import (
    Message,
    ProviderError,
    StreamEvent,
    StreamingProvider,
    ToolSchema,
)
from jupyter_brain.providers.openai_chunks import FINISH, ChunkAssembler
from jupyter_brain.providers.openai_server import (
    default_reasoning_echo,
    is_model_not_found,
    learn_reasoning_echo,
    unserved_model_error,
)
from jupyter_brain.providers.openai_wire import ReasoningEcho, to_wire, wire_tools
from jupyter_brain.providers.sdk_support import (
    estimate_tokens,
    guarded,
    map_sdk_error,
    transport_errors,
)
from jupyter_brain.providers.stream_end import saw_done, watching_client_class

# preset -> (default base_url, placeholder key or None if a real key is required, model)
PRESETS: dict[str, tuple[str | None, str | None, str | None]] = {
    "openai": (None, None, "gpt-5.4"),
    "ollama": ("http://localhost:11434/v1", "ollama", None),
    "vllm": ("http://localhost:8000/v1", "vllm", None),
}
_FINISH = FINISH  # names kept for importers from before the split
_ChunkAssembler = ChunkAssembler
__all__ = ["PRESETS", "OpenAICompatProvider", "to_wire", "wire_tools"]


class OpenAICompatProvider(StreamingProvider):
    """Chat Completions over the official ``openai`` SDK, against any compatible server.

    Local presets (``ollama``, ``vllm``) need no key; without ``model`` they use the first
    model the server lists at ``/v1/models`` (looked up on the first request), as does
    ``openai`` pointed at a non-OpenAI ``base_url`` without a key.
    ``send_reasoning_content`` fixes whether thinking goes back as ``reasoning_content``
    on tool-call turns (None: decided from the base URL and the server's answers).
    """

    supports_native_thinking = False

    def __init__(
        self,
        model: str | None = None,
        *,
        preset: str = "openai",
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int | None = None,
        timeout: float = 600.0,
        max_retries: int = 2,
        send_reasoning_content: bool | None = None,
        vision: bool | None = None,
    ) -> None:
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; choose one of {sorted(PRESETS)}")
        default_url, placeholder_key, default_model = PRESETS[preset]
        self.name = preset
        if preset == "openai":
            base_url = (
                base_url
                or os.environ.get("OPENAI_BASE_URL")
                or os.environ.get("JUPYTER_BRAIN_BASE_URL")
            )
        self.base_url = base_url or default_url
        key = api_key or (os.environ.get("OPENAI_API_KEY") if preset == "openai" else None)
        self.api_key = key  # masked in every view (providers.capabilities.provider_secrets)
        keyless = not key
        if keyless:
            if placeholder_key is None and _is_official(self.base_url):
                raise ProviderError(
                    "no OpenAI API key: set the OPENAI_API_KEY environment variable or pass "
                    "api_key=...; for a local server set OPENAI_BASE_URL (or use the "
                    "'ollama' / 'vllm' provider)",
                    kind="auth",
                    provider=self.name,
                )
            key = placeholder_key or "not-needed"
            if not _is_official(self.base_url):
                default_model = None  # a local server: ask it what it serves
        # OpenAI's own reasoning models only accept the newer name; a local server (no
        # key) knows the older one, and llama-cpp-python ignores the newer one: unbounded.
        self._max_tokens_field = "max_completion_tokens" if preset == "openai" and not keyless else "max_tokens"
        self.model = model or default_model or ""
        self._discovered = False  # self.model came from the server's /v1/models (served_models.py)
        self.max_tokens = max_tokens
        self.vision = vision  # None: from the model catalogue (``takes_images``)
        self._echo_fixed = send_reasoning_content is not None
        self.reasoning_echo: ReasoningEcho = default_reasoning_echo(self.base_url, send_reasoning_content)

        import openai

        self._sdk = openai
        # What a request can raise: the SDK's errors and the HTTP layer's.
        self._call_errors: tuple[type[BaseException], ...] = (openai.OpenAIError, *transport_errors())
        # its streams note a closing [DONE] (stream_end.py: servers with no finish_reason)
        self._client = watching_client_class(openai)(
            api_key=key, base_url=self.base_url, timeout=timeout, max_retries=max_retries
        )

    def __repr__(self) -> str:
        where = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"OpenAICompatProvider(preset={self.name!r}, model={self.model!r}{where})"

    @property
    def takes_images(self) -> bool:
        """Tool-result figures go to the model as images (else a note): the ``vision``
        argument, or the model's family in the catalogue."""
        return self.vision if self.vision is not None else accepts_images(self.model)

    def request_params(self, messages: list[Message], tools: list[ToolSchema]) -> dict[str, Any]:
        """Keyword arguments for ``chat.completions.create`` (without ``timeout``)."""
        params: dict[str, Any] = {
            "model": self._resolve_model(),
            "messages": to_wire(messages, self.reasoning_echo, images=self.takes_images),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            params["tools"] = wire_tools(tools)
        if self.max_tokens:
            params[self._max_tokens_field] = self.max_tokens
        return params

    def generate_stream(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        timeout_s: float = 60.0,
        thinking_budget: int = 0,
    ) -> Iterator[StreamEvent]:
        """``thinking_budget`` is ignored: there is no portable way to set one here."""
        params = self.request_params(messages, tools)
        stream = self._open(params, messages, timeout_s)
        server = self.base_url or "api.openai.com"
        assembler = ChunkAssembler(
            self.name, self.model, server, messages, tools,
            max_tokens=params.get(self._max_tokens_field), ended_with_done=lambda: saw_done(stream),
        )
        try:
            yield from assembler.run(guarded(stream, self._sdk.OpenAIError, self._error))
        finally:
            stream.close()

    def _open(self, params: dict[str, Any], messages: list[Message], timeout_s: float) -> Any:
        """Start the stream; a 400 about ``reasoning_content`` adjusts the echo and retries, and
        a model found at ``/v1/models`` that the server no longer serves is looked up again, once."""
        asked_again = False
        for _ in range(3):
            try:
                return self._client.chat.completions.create(**params, timeout=timeout_s)
            except self._call_errors as err:
                mapped = self._error(err)
                if self._discovered and (mapped.kind == "connection" or is_model_not_found(mapped)):
                    self._forget_model()  # the server may have restarted with another model
                    if not asked_again and mapped.kind != "connection":
                        asked_again = True
                        params["model"] = self._resolve_model()
                        continue
                learned = None if self._echo_fixed else learn_reasoning_echo(self.reasoning_echo, mapped)
                if learned is not None:
                    self.reasoning_echo = learned
                    params["messages"] = to_wire(messages, learned, images=self.takes_images)
                    continue
                if is_model_not_found(mapped):
                    raise self._unserved(mapped, params["model"]) from None
                raise mapped from None
        raise ProviderError(
            "the server kept rejecting reasoning_content whether it was sent or not",
            kind="bad_request", status_code=400, provider=self.name,
        )

    def _unserved(self, error: ProviderError, model: str) -> ProviderError:
        """A 404 for the model: list what the server serves (one extra request, now only)."""
        try:
            served = [m.id for m in self._client.models.list(timeout=10.0)]
        except self._call_errors:
            return error
        if not served or model in served:
            return error
        return unserved_model_error(error, model=model, served=served, base_url=self.base_url)

    def count_tokens(self, messages: list[Message], tools: list[ToolSchema]) -> int:
        """Chat Completions has no count endpoint, so this is a local estimate."""
        return estimate_tokens(messages, tools)

    def _resolve_model(self) -> str:
        if self.model:
            return self.model
        known = served_models.remembered(self.base_url)  # asked once per server (served_models.py)
        if known:
            self.model, self._discovered = known, True
            return known
        try:
            models = [m.id for m in self._client.models.list()]
        except self._call_errors as err:
            mapped = self._error(err)
            mapped.message = (
                f"no model given and the server at {self.base_url} did not list its models "
                f"({mapped.message}); pass model=..."
            )
            raise mapped from None
        if not models:
            raise ProviderError(
                f"no model given and the server at {self.base_url} lists none; pass model=...",
                kind="bad_request",
                provider=self.name,
            )
        self.model, self._discovered = models[0], True
        served_models.remember(self.base_url, self.model)
        return self.model

    def _forget_model(self) -> None:
        served_models.forget(self.base_url)
        self.model, self._discovered = "", False

    def close(self) -> None:
        """Close the HTTP client (its pooled connections); a kept provider's end (the kernel's)."""
        self._client.close()

    def _error(self, err: BaseException, *, mid_stream: bool = False) -> ProviderError:
        mapped = map_sdk_error(err, self.name, mid_stream=mid_stream)
        if mapped.kind == "auth":
            mapped.message += " (check OPENAI_API_KEY or the api_key=... you passed)"
        return mapped


def _is_official(base_url: str | None) -> bool:
    return not base_url or "api.openai.com" in base_url
