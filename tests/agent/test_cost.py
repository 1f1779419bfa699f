"""Price table and SessionCostTracker."""

from __future__ import annotations

import threading

import pytest

from jupyter_brain.agent.cost import FREE_PROVIDERS, PRICES, ModelPrice, SessionCostTracker, price_for
from jupyter_brain.providers.base import Usage

M = 1_000_000


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-opus-4-1-20250805", "claude-opus-4"),
        ("claude-opus-4-5-20251101", "claude-opus-4-5"),  # longest prefix wins
        ("claude-haiku-4-5", "claude-haiku-4"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4.1-mini", "gpt-4.1-mini"),
        ("gpt-4.1-2025-04-14", "gpt-4.1"),
        ("GPT-4O", "gpt-4o"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4"),
    ],
)
def test_prefix_matching(model, key):
    assert price_for(model) == PRICES[key]


@pytest.mark.parametrize("model", ["llama3.1:8b", "mystery-model", "", None, "4o-mini", "o3"])
def test_unknown_model_is_none(model):
    assert price_for(model) is None


@pytest.mark.parametrize("provider", sorted(FREE_PROVIDERS))
def test_free_providers(provider):
    price = price_for("llama3.1:70b", provider)
    assert price == ModelPrice(0, 0, 0, 0)
    assert price_for(None, provider) == ModelPrice(0, 0, 0, 0)


def test_known_provider_does_not_make_unknown_model_free():
    assert price_for("mystery", "anthropic") is None
    assert price_for("claude-sonnet-4-5", "anthropic") == PRICES["claude-sonnet-4"]


def test_custom_table():
    table = {"my-model": ModelPrice(1, 2, 0.5, 1.5)}
    assert price_for("my-model-v2", table=table) == table["my-model"]
    assert price_for("claude-sonnet-4", table=table) is None


def test_empty_table_prices_nothing():
    assert price_for("claude-sonnet-4", table={}) is None
    tracker = SessionCostTracker(prices={})
    assert tracker.cost_of(Usage(input_tokens=M), "claude-sonnet-4") is None


def test_model_price_cost_includes_cache_math():
    price = PRICES["claude-sonnet-4"]  # $3 in, $15 out, $0.30 cache read, $3.75 cache write per Mtok
    usage = Usage(input_tokens=M, output_tokens=M, cache_read_tokens=M, cache_creation_tokens=M)
    assert price.cost(usage) == pytest.approx(3 + 15 + 0.30 + 3.75)
    usage = Usage(input_tokens=1000, output_tokens=500, cache_read_tokens=20_000, cache_creation_tokens=4000)
    expected = (1000 * 3 + 500 * 15 + 20_000 * 0.30 + 4000 * 3.75) / M
    assert price.cost(usage) == pytest.approx(expected)
    assert expected == pytest.approx(0.0315)


def test_cache_reads_are_cheaper_than_input_and_writes_dearer():
    for key, p in PRICES.items():
        if key == "scripted":
            continue
        assert p.cache_read < p.input, key
        assert p.cache_write >= p.input, key


def test_tracker_per_turn_and_session_totals():
    tr = SessionCostTracker()
    u1 = Usage(input_tokens=1000, output_tokens=100, cache_read_tokens=5000, cache_creation_tokens=2000)
    u2 = Usage(input_tokens=500, output_tokens=50)
    c1 = tr.record("t1", u1, "claude-sonnet-4-5-20250929")
    c2 = tr.record("t1", u2, "claude-sonnet-4-5-20250929")  # a second step of the same turn
    c3 = tr.record("t2", u2, "claude-haiku-4-5")
    assert c1 == pytest.approx((1000 * 3 + 100 * 15 + 5000 * 0.3 + 2000 * 3.75) / M)
    assert c2 == pytest.approx((500 * 3 + 50 * 15) / M)
    assert c3 == pytest.approx((500 * 1 + 50 * 5) / M)
    assert [t.turn_id for t in tr.turns] == ["t1", "t2"]
    t1 = tr.turn("t1")
    assert t1.usage == u1 + u2 and t1.model == "claude-sonnet-4-5-20250929"
    assert t1.cost_usd == pytest.approx(c1 + c2)
    assert tr.turn("t2").cost_usd == pytest.approx(c3)
    assert tr.turn("missing") is None
    assert tr.total_usage == u1 + u2 + u2
    assert tr.total_cost_usd == pytest.approx(c1 + c2 + c3)
    summary = tr.summary()
    assert summary["turns"] == 2
    assert summary["input_tokens"] == 2000 and summary["cache_read_tokens"] == 5000
    assert summary["cache_creation_tokens"] == 2000 and summary["output_tokens"] == 200
    assert summary["cost_usd"] == pytest.approx(c1 + c2 + c3)


def test_unknown_price_makes_turn_and_total_none():
    tr = SessionCostTracker()
    tr.record("t1", Usage(input_tokens=10), "claude-sonnet-4")
    assert tr.record("t2", Usage(input_tokens=10), "mystery") is None
    assert tr.turn("t2").cost_usd is None
    assert tr.total_cost_usd is None
    # once unknown, a turn stays unknown even if later usage is priced
    tr.record("t2", Usage(input_tokens=10), "claude-sonnet-4")
    assert tr.turn("t2").cost_usd is None
    tr2 = SessionCostTracker()
    tr2.record("t", Usage(input_tokens=10), "claude-sonnet-4")
    tr2.record("t", Usage(input_tokens=10), "mystery")
    assert tr2.turn("t").cost_usd is None


def test_free_provider_costs_zero_not_none():
    tr = SessionCostTracker()
    assert tr.record("t", Usage(input_tokens=10**6, output_tokens=10**6), "qwen2.5:7b", "ollama") == 0.0
    assert tr.total_cost_usd == 0.0


def test_empty_tracker():
    tr = SessionCostTracker()
    assert tr.total_usage == Usage()
    assert tr.total_cost_usd == 0
    assert tr.summary()["turns"] == 0


def test_tracker_is_thread_safe():
    tr = SessionCostTracker()
    barrier = threading.Barrier(10)

    def worker():
        barrier.wait()
        for _ in range(100):
            tr.record("t", Usage(input_tokens=1, output_tokens=1), "gpt-4o")

    threads = [threading.Thread(target=worker) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(tr.turns) == 1
    assert tr.total_usage == Usage(input_tokens=1000, output_tokens=1000)
    assert tr.total_cost_usd == pytest.approx(1000 * (2.5 + 10) / M)


def test_usage_add_and_total_input():
    u = Usage(input_tokens=1, output_tokens=2, cache_read_tokens=3, cache_creation_tokens=4)
    assert u + u == Usage(input_tokens=2, output_tokens=4, cache_read_tokens=6, cache_creation_tokens=8)
    assert u.total_input_tokens == 8


def test_turns_found_by_id_and_priced_per_model():
    tr = SessionCostTracker()
    assert tr.record("a", Usage(input_tokens=M), "gpt-4o") == pytest.approx(2.5)
    assert tr.record("b", Usage(input_tokens=M), "claude-sonnet-4-5") == pytest.approx(3.0)
    # The model a provider reports can change within a turn: each call is priced by its own.
    assert tr.record("b", Usage(input_tokens=M), "gpt-4o-mini") == pytest.approx(0.15)
    assert tr.record("b", Usage(input_tokens=M), "mystery") is None
    assert tr.turn("a").cost_usd == pytest.approx(2.5) and tr.turn("b").cost_usd is None
    assert [t.turn_id for t in tr.turns] == ["a", "b"] and tr.turn("zzz") is None
    tr.turns.clear()  # a caller may reset the list: recording starts a new entry
    tr.record("a", Usage(output_tokens=1), "gpt-4o")
    assert [t.turn_id for t in tr.turns] == ["a"] and tr.turn("a").usage == Usage(output_tokens=1)
