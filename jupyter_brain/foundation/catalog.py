"""The model catalogue: context windows and prices, found by one name matcher.

A model id is normalized once (lowercased, provider path and Bedrock/Vertex prefixes such as
``openai/`` or ``us.anthropic.`` removed) and looked up by its longest known prefix, so dated
ids ("claude-sonnet-4-5-20250929") find their family. Windows and prices use the same
matcher, so a name that has a window also has its price.

Prices are US dollars per million tokens: (input, output, cache read, cache write). Unknown
models cost ``None`` (not 0) so a view can say "price unknown" rather than "free"; local
servers are free.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

T = TypeVar("T")

# Bedrock style names: "anthropic.claude-…", "meta.llama3-…", and with a cross-region
# inference profile in front: "us.", "eu.", "apac.", "us-gov.", "global."
_VENDOR_PREFIX = re.compile(r"^(?:(?:[a-z]{2}|apac|global|us-gov)\.)?(?:anthropic|openai|meta|mistral)\.")


def normalize_model_id(model: str) -> str:
    """``"openai/gpt-4o"``, ``" US.Anthropic.claude-opus-4 "`` → ``"gpt-4o"``, ``"claude-opus-4"``."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    return _VENDOR_PREFIX.sub("", name)


def match_model(model: str | None, table: Mapping[str, T]) -> T | None:
    """The entry of ``table`` whose key is the longest prefix of the normalized ``model``."""
    if not model:
        return None
    name = normalize_model_id(model)
    best = max((key for key in table if name.startswith(key)), key=len, default=None)
    return table[best] if best else None  # an empty key matches nothing, as before


# --------------------------------------------------------------------------- windows

DEFAULT_CONTEXT_WINDOW = 128_000

# Local servers (Ollama, vLLM) default to what the model was trained for; a smaller
# server-side num_ctx is the user's setting to pass explicitly.
CONTEXT_WINDOWS: dict[str, int] = {
    "claude-": 200_000,
    "claude": 200_000,
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4": 200_000,
    "llama3.1": 128_000,
    "llama3.2": 128_000,
    "llama3.3": 128_000,
    "llama-3.1": 128_000,
    "llama-3.2": 128_000,
    "llama-3.3": 128_000,
    "llama4": 128_000,
    "llama": 8_192,
    "qwen": 32_768,
    "mistral": 32_768,
    "mixtral": 32_768,
    "gemma3": 128_000,
    "gemma": 8_192,
    "deepseek": 128_000,
    "phi4": 16_384,
    "phi3": 128_000,
}


def context_window_for(model: str | None) -> int:
    """The context window of a model, by name prefix; unknown models get 128k."""
    window = match_model(model, CONTEXT_WINDOWS)
    return DEFAULT_CONTEXT_WINDOW if window is None else window


# --------------------------------------------------------------------------- images

# Model families that take images as input (tool-result figures are sent to these only).
# Longest prefix wins, so a text-only member of a vision family is listed as False.
VISION_MODELS: dict[str, bool] = {
    "claude-": True,
    "claude-2": False,
    "claude-instant": False,
    "gpt-5": True,
    "gpt-4.1": True,
    "gpt-4o": True,
    "gpt-4-turbo": True,
    "gpt-4-vision": True,
    "o1": True,
    "o1-mini": False,
    "o3": True,
    "o3-mini": False,
    "o4": True,
    "llama3.2-vision": True,
    "llama-3.2-11b-vision": True,
    "llama-3.2-90b-vision": True,
    "llama4": True,
    "llava": True,
    "bakllava": True,
    "gemma3": True,
    "qwen2.5-vl": True,
    "qwen2-vl": True,
    "qwen-vl": True,
    "qwen3-vl": True,
    "pixtral": True,
    "minicpm-v": True,
    "moondream": True,
    "grok-2-vision": True,
    "grok-4": True,
}


def accepts_images(model: str | None) -> bool:
    """Whether a model takes images as input, by family; unknown models are assumed not to."""
    return bool(match_model(model, VISION_MODELS))


# --------------------------------------------------------------------------- prices


class UsageLike(Protocol):
    """The token fields of ``providers.base.Usage`` (duck-typed: foundation imports no providers)."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_creation_tokens: int


@dataclass(frozen=True)
class ModelPrice:
    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, usage: UsageLike) -> float:
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_creation_tokens * self.cache_write
        ) / 1_000_000


PRICES: dict[str, ModelPrice] = {
    "claude-opus-4": ModelPrice(15.0, 75.0, 1.50, 18.75),
    "claude-opus-4-5": ModelPrice(5.0, 25.0, 0.50, 6.25),
    "claude-sonnet-4": ModelPrice(3.0, 15.0, 0.30, 3.75),
    "claude-3-7-sonnet": ModelPrice(3.0, 15.0, 0.30, 3.75),
    "claude-3-5-sonnet": ModelPrice(3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4": ModelPrice(1.0, 5.0, 0.10, 1.25),
    "claude-3-5-haiku": ModelPrice(0.80, 4.0, 0.08, 1.0),
    "gpt-4o-mini": ModelPrice(0.15, 0.60, 0.075, 0.15),
    "gpt-4o": ModelPrice(2.50, 10.0, 1.25, 2.50),
    "gpt-4.1-nano": ModelPrice(0.10, 0.40, 0.025, 0.10),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60, 0.10, 0.40),
    "gpt-4.1": ModelPrice(2.0, 8.0, 0.50, 2.0),
    "o3-mini": ModelPrice(1.10, 4.40, 0.55, 1.10),
    "o4-mini": ModelPrice(1.10, 4.40, 0.275, 1.10),
    "scripted": ModelPrice(0.0, 0.0, 0.0, 0.0),
}
FREE_PROVIDERS = {"ollama", "vllm", "scripted", "lmstudio", "replayed"}  # replayed: answered from a recording


def price_for(
    model: str | None, provider: str | None = None, table: Mapping[str, ModelPrice] | None = None
) -> ModelPrice | None:
    """The price of a model by name prefix; free on local providers, ``None`` when unknown."""
    if provider in FREE_PROVIDERS:
        return ModelPrice(0.0, 0.0, 0.0, 0.0)
    return match_model(model, PRICES if table is None else table)  # an empty table prices nothing
