"""The shared ledger on SQLite and on a real PostgreSQL: reserve before a call, settle after,
concurrent spenders never commit more than a cap, a database gone down refuses (fail closed)
and the settlements it missed are written once it is back."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest

from jupyter_brain.governance import CapReached, DailyCaps, Ledger, LedgerUnavailable, Scope

TEAM = Scope("team", "lab", ("alice", "bob"), DailyCaps(max_cost_per_day=1.0, max_tokens_per_day=10_000))
ALICE = Scope("user", "alice", ("alice",), DailyCaps(max_cost_per_day=0.5))


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    server = request.getfixturevalue("postgres")
    import psycopg

    with psycopg.connect(server.url, autocommit=True) as conn:  # each test its own tables
        conn.execute("DROP TABLE IF EXISTS jupyter_brain_spending, jupyter_brain_ledger_meta")
    return server.url


def test_reserve_settle_and_the_cap_that_would_be_crossed(ledger_url):
    ledger = Ledger(ledger_url)
    first = ledger.reserve("alice", [ALICE, TEAM], 0.4, 1000, day="2026-01-02")
    assert isinstance(first, int)
    reached = ledger.reserve("alice", [ALICE, TEAM], 0.2, 1000, day="2026-01-02")
    assert isinstance(reached, CapReached) and reached.scope == ALICE and reached.spent == pytest.approx(0.4)
    ledger.settle(first, 0.05, 300)  # what the call really cost
    bob = ledger.reserve("bob", [TEAM], 0.9, 1000, day="2026-01-02")
    assert isinstance(bob, int)
    reached = ledger.reserve("alice", [ALICE, TEAM], 0.1, 1000, day="2026-01-02")
    assert isinstance(reached, CapReached) and reached.scope == TEAM
    assert reached.by_member == {"alice": pytest.approx(0.05), "bob": pytest.approx(0.9)}
    tokens = ledger.reserve("bob", [TEAM], 0.0, 9_000, day="2026-01-02")
    assert isinstance(tokens, CapReached) and tokens.unit == "tokens" and tokens.spent == 1300
    assert isinstance(ledger.reserve("alice", [ALICE, TEAM], 0.1, 10, day="2026-01-03"), int)  # a new day
    spending = ledger.spending(["alice", "bob", "carol"], day="2026-01-02")
    assert spending["alice"].cost_usd == pytest.approx(0.05) and spending["bob"].tokens == 1000
    assert spending["carol"].cost_usd == 0
    ledger.close()


def test_the_schema_is_versioned_and_a_newer_one_is_refused(ledger_url):
    Ledger(ledger_url).spending(["alice"])  # created on first use
    if ledger_url.startswith("sqlite"):
        with sqlite3.connect(ledger_url.removeprefix("sqlite:///")) as conn:
            assert conn.execute("SELECT value FROM jupyter_brain_ledger_meta").fetchone() == ("1",)
            conn.execute("UPDATE jupyter_brain_ledger_meta SET value = '99'")
    else:
        import psycopg

        with psycopg.connect(ledger_url, autocommit=True) as conn:
            assert conn.execute("SELECT value FROM jupyter_brain_ledger_meta").fetchone() == ("1",)
            conn.execute("UPDATE jupyter_brain_ledger_meta SET value = '99'")
    with pytest.raises(LedgerUnavailable, match="schema version 99, newer than this jupyter-brain knows"):
        Ledger(ledger_url).spending(["alice"])


def _spend(url: str, user: str, calls: int, estimate: float, real: float, start: object) -> int:
    start.wait()  # type: ignore[attr-defined]
    ledger = Ledger(url)
    made = 0
    for _ in range(calls):
        outcome = ledger.reserve(user, [TEAM], estimate, 10, day="2026-01-02")
        if isinstance(outcome, CapReached):
            break
        made += 1
        ledger.settle(outcome, real, 10)
    ledger.close()
    return made


def test_concurrent_spenders_never_commit_more_than_the_cap(ledger_url):
    """Eight processes spend at once; each call's real cost equals its estimate, so the
    ledger must stop them at exactly the cap (10 calls of $0.1), never after."""
    context = multiprocessing.get_context("spawn")
    start = context.Manager().Event()
    with context.Pool(8) as pool:
        results = [pool.apply_async(_spend, (ledger_url, ("alice", "bob")[i % 2], 5, 0.1, 0.1, start))
                   for i in range(8)]
        start.set()
        made = sum(r.get(timeout=120) for r in results)
    assert made == 10
    spent = Ledger(ledger_url).spending(["alice", "bob"], day="2026-01-02")
    assert sum(s.cost_usd for s in spent.values()) == pytest.approx(1.0)


def test_postgres_going_down_mid_session_refuses_then_recovers(postgres):
    import psycopg

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS jupyter_brain_spending, jupyter_brain_ledger_meta")
    ledger = Ledger(postgres.url)
    reservation = ledger.reserve("alice", [TEAM], 0.5, 100, day="2026-01-02")
    assert isinstance(reservation, int)
    postgres.stop()
    try:
        ledger.settle(reservation, 0.01, 50)  # kept: the reservation ($0.5) counts meanwhile
        with pytest.raises(LedgerUnavailable, match=r"the ledger postgresql://postgres@127\.0\.0\.1:\d+/postgres "
                                                     "(cannot be reached|failed)"):
            ledger.reserve("alice", [TEAM], 0.1, 100, day="2026-01-02")
    finally:
        postgres.start()
    assert isinstance(ledger.reserve("alice", [TEAM], 0.1, 100, day="2026-01-02"), int)
    assert ledger.spending(["alice"], day="2026-01-02")["alice"].cost_usd == pytest.approx(0.11)  # settled late
    ledger.close()


def test_an_unusable_sqlite_ledger_refuses(tmp_path):
    (tmp_path / "ledger.sqlite").mkdir()  # a folder where the file should be
    with pytest.raises(LedgerUnavailable, match="cannot be used"):
        Ledger(f"sqlite:///{tmp_path / 'ledger.sqlite'}").reserve("alice", [TEAM], 0.1, 1)
