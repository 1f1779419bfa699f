"""The model catalogue: context windows and prices found by one name matcher."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from jupyter_brain.foundation.catalog import (
    DEFAULT_CONTEXT_WINDOW,
    PRICES,
    ModelPrice,
    context_window_for,
    match_model,
    normalize_model_id,
    price_for,
)


@pytest.mark.parametrize(("model", "window"), [
    ("claude-sonnet-4-5", 200_000), ("claude-3-5-haiku-latest", 200_000), ("us.anthropic.claude-opus-4", 200_000),
    ("gpt-5-mini", 400_000), ("gpt-4.1-nano", 1_047_576), ("gpt-4o-mini", 128_000), ("o3-mini", 200_000),
    ("o4-mini", 200_000), ("llama3.1:8b", 128_000), ("qwen2.5-coder:7b", 32_768), ("mistral", 32_768),
    ("openai/gpt-4o", 128_000), ("something-new", 128_000), (None, 128_000), ("", 128_000),
])
def test_context_window_for(model, window) -> None:
    assert context_window_for(model) == window


@pytest.mark.parametrize(("model", "name"), [
    ("claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("  Claude-Sonnet-4-5 ", "claude-sonnet-4-5"),
    ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("openrouter/openai/gpt-4o-mini", "gpt-4o-mini"),
    ("anthropic.claude-3-5-haiku-20241022-v1:0", "claude-3-5-haiku-20241022-v1:0"),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929-v1:0"),
    ("eu.meta.llama3-1-70b-instruct-v1:0", "llama3-1-70b-instruct-v1:0"),
    ("mistral.mistral-large-2407-v1:0", "mistral-large-2407-v1:0"),
    ("apac.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4-20250514-v1:0"),
    ("global.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5-20251101-v1:0"),
    ("mistral", "mistral"),  # a bare vendor name is a model name, not a prefix
    ("usanthropic.claude-x", "usanthropic.claude-x"),
])
def test_normalize_model_id(model, name) -> None:
    assert normalize_model_id(model) == name


# One family written the ways providers spell it: plain, dated, provider path, Bedrock/Vertex.
SPELLINGS = {
    "claude-sonnet-4": [
        "claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5",
        "anthropic.claude-sonnet-4-5-20250929-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "claude-sonnet-4-5@20250929", "CLAUDE-SONNET-4-5",
    ],
    "claude-opus-4-5": ["claude-opus-4-5-20251101", "global.anthropic.claude-opus-4-5-20251101-v1:0"],
    "gpt-4o-mini": ["gpt-4o-mini", "gpt-4o-mini-2024-07-18", "openai/gpt-4o-mini", "azure/openai/gpt-4o-mini"],
    "gpt-4.1": ["gpt-4.1-2025-04-14", "openai/gpt-4.1"],
}


@pytest.mark.parametrize(("key", "model"), [(k, m) for k, ms in SPELLINGS.items() for m in ms])
def test_every_spelling_finds_the_same_window_and_price(key, model) -> None:
    assert price_for(model) == PRICES[key]
    assert context_window_for(model) == context_window_for(key)


def test_a_model_the_catalogue_does_not_know_has_no_price_and_the_default_window() -> None:
    for model in ["llama3.1:8b", "mystery", "my-org/finetune-7b"]:
        assert price_for(model) is None
        assert context_window_for(model) == DEFAULT_CONTEXT_WINDOW


def test_match_model_takes_the_longest_prefix_and_ignores_empty_names() -> None:
    table = {"a": 1, "ab": 2, "abc-": 3, "": 99}
    assert match_model("abc-1", table) == 3
    assert match_model("abd", table) == 2
    assert match_model("x", table) is None  # an empty key matches nothing
    assert match_model(None, table) is None and match_model("", table) is None
    assert match_model("ab", {}) is None


def test_model_price_cost_is_duck_typed() -> None:
    usage = SimpleNamespace(input_tokens=1_000_000, output_tokens=0, cache_read_tokens=0, cache_creation_tokens=0)
    assert ModelPrice(2.0, 8.0, 0.5, 2.0).cost(usage) == pytest.approx(2.0)
