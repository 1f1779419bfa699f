"""The ledger's two databases behind one small interface: SQLite (one machine, the
default) and PostgreSQL through psycopg 3 (a hub). Each ``Backend`` runs one
check-and-reserve as a single transaction that no other kernel can interleave with:
SQLite's ``BEGIN IMMEDIATE`` (the file's write lock), PostgreSQL's transaction-scoped
advisory locks on each capped scope (a user, a team), taken in sorted order."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

SCHEMA_VERSION = 1
# One row per model call: reserved before it (``settled`` 0), settled with what it really
# used. An unsettled row counts at its reservation, forever: a kernel that died mid-call
# may have spent it, and the ledger never lets spending go unrecorded.
SCHEMA = [
    """CREATE TABLE IF NOT EXISTS jupyter_brain_ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS jupyter_brain_spending (
        id {id_type} PRIMARY KEY,
        day TEXT NOT NULL,
        user_name TEXT NOT NULL,
        cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
        tokens BIGINT NOT NULL DEFAULT 0,
        settled INTEGER NOT NULL DEFAULT 0,
        created_at DOUBLE PRECISION NOT NULL,
        turn_id TEXT NOT NULL DEFAULT '')""",
    """CREATE INDEX IF NOT EXISTS jupyter_brain_spending_day_user ON jupyter_brain_spending (day, user_name)""",
]


# PostgreSQL: a check-and-reserve in one statement, so one round trip (its transaction is the
# statement's): the scopes' advisory locks in sorted order, then each scope's sums (in READ
# COMMITTED each statement of the function sees what committed before it ran, so after the
# locks), then the reservation. Scope i's members are ``p_member`` where ``p_member_scope`` = i.
RESERVE_FUNCTION = """
CREATE OR REPLACE FUNCTION jupyter_brain_reserve(
    p_day text, p_user text, p_cost double precision, p_tokens bigint, p_turn text, p_created double precision,
    p_locks text[], p_member_scope int[], p_member text[], p_cap_cost double precision[], p_cap_tokens bigint[])
RETURNS TABLE (reservation bigint, crossed int, unit text, spent double precision)
LANGUAGE plpgsql AS $fn$
DECLARE
    k text;
    i int;
    s_cost double precision;
    s_tokens bigint;
    new_id bigint;
BEGIN
    FOR k IN SELECT x FROM unnest(p_locks) AS x ORDER BY x LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(k, 0));
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(p_cap_cost, 1), 0) LOOP
        SELECT COALESCE(SUM(s.cost_usd), 0), COALESCE(SUM(s.tokens), 0) INTO s_cost, s_tokens
          FROM jupyter_brain_spending s
         WHERE s.day = p_day AND s.user_name IN (
               SELECT m.name FROM unnest(p_member_scope, p_member) AS m(scope, name) WHERE m.scope = i);
        IF p_cap_cost[i] IS NOT NULL AND s_cost + p_cost > p_cap_cost[i] THEN
            RETURN QUERY SELECT NULL::bigint, i, 'usd'::text, s_cost;
            RETURN;
        END IF;
        IF p_cap_tokens[i] IS NOT NULL AND s_tokens + p_tokens > p_cap_tokens[i] THEN
            RETURN QUERY SELECT NULL::bigint, i, 'tokens'::text, s_tokens::double precision;
            RETURN;
        END IF;
    END LOOP;
    INSERT INTO jupyter_brain_spending (day, user_name, cost_usd, tokens, settled, created_at, turn_id)
         VALUES (p_day, p_user, p_cost, p_tokens, 0, p_created, p_turn) RETURNING id INTO new_id;
    RETURN QUERY SELECT new_id, 0, ''::text, 0::double precision;
END
$fn$
"""


class LedgerUnavailable(RuntimeError):
    """The ledger's database cannot be reached or used (the call is refused: fail closed)."""


class Backend(Protocol):
    url: str

    def transaction(self, scopes: Sequence[str]) -> Any: ...  # a context manager yielding a cursor-like
    def close(self) -> None: ...


def _sum_query(placeholder: str, users: int) -> str:
    marks = ", ".join([placeholder] * users)
    return (f"SELECT COALESCE(SUM(cost_usd), 0), COALESCE(SUM(tokens), 0) FROM jupyter_brain_spending "
            f"WHERE day = {placeholder} AND user_name IN ({marks})")


class SQLiteBackend:
    """A ledger file; ``BEGIN IMMEDIATE`` serializes check-and-reserve across processes."""

    placeholder = "?"

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = Path(url.removeprefix("sqlite:///")).expanduser()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._conn = conn
            try:
                _ensure_schema(self, "INTEGER")
            except BaseException:
                self._drop()
                raise
        return self._conn

    @contextmanager
    def transaction(self, scopes: Sequence[str] = ()) -> Iterator[Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]]:
        with self._lock:
            try:
                conn = self._connection()
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                self._drop()
                raise LedgerUnavailable(f"the ledger {self.path} cannot be used: {exc}") from None

            def run(sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
                return conn.execute(sql, tuple(params)).fetchall()

            try:
                yield run
            except sqlite3.Error as exc:
                conn.execute("ROLLBACK")
                raise LedgerUnavailable(f"the ledger {self.path} failed: {exc}") from None
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def close(self) -> None:
        with self._lock:
            self._drop()


class PostgresBackend:
    """A PostgreSQL database by URL (psycopg 3); one connection per kernel, reconnected
    after a failure. Scopes are locked with ``pg_advisory_xact_lock`` for the transaction."""

    placeholder = "%s"

    def __init__(self, url: str, *, connect_timeout_s: int = 5) -> None:
        self.url = url
        self.connect_timeout_s = connect_timeout_s
        self._lock = threading.Lock()
        self._conn: Any = None

    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed:
            try:
                import psycopg
            except ImportError:
                raise LedgerUnavailable("the policy's ledger is PostgreSQL, and psycopg is not installed "
                                        "(pip install 'psycopg[binary]')") from None
            self._conn = psycopg.connect(self.url, connect_timeout=self.connect_timeout_s, autocommit=True)
            try:
                _ensure_schema(self, "BIGSERIAL")
            except BaseException:
                self._drop()
                raise
        return self._conn

    @contextmanager
    def transaction(self, scopes: Sequence[str] = ()) -> Iterator[Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]]:
        import psycopg

        with self._lock:
            try:
                conn = self._connection()
                cursor = conn.cursor()
                cursor.execute("BEGIN")
                if scopes:  # one statement, one order everywhere (no deadlock)
                    cursor.execute("SELECT pg_advisory_xact_lock(h) FROM (SELECT hashtextextended(k, 0) AS h "
                                   "FROM unnest(%s::text[]) AS k ORDER BY k) AS ordered", (sorted(set(scopes)),))
            except psycopg.Error as exc:
                self._drop()
                raise LedgerUnavailable(f"the ledger {_safe_url(self.url)} cannot be reached: "
                                        f"{_first_line(exc)}") from None

            def run(sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
                cursor.execute(sql, tuple(params))
                return cursor.fetchall() if cursor.description else []

            try:
                yield run
                cursor.execute("COMMIT")
            except psycopg.Error as exc:
                self._drop()
                raise LedgerUnavailable(f"the ledger {_safe_url(self.url)} failed: {_first_line(exc)}") from None
            except BaseException:
                try:
                    cursor.execute("ROLLBACK")
                except psycopg.Error:
                    self._drop()
                raise

    def call(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """One statement, its own transaction: one round trip."""
        import psycopg

        with self._lock:
            try:
                cursor = self._connection().cursor()
                cursor.execute(sql, tuple(params))
                return cursor.fetchall() if cursor.description else []
            except psycopg.Error as exc:
                self._drop()
                raise LedgerUnavailable(f"the ledger {_safe_url(self.url)} cannot be reached: "
                                        f"{_first_line(exc)}") from None

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - a broken connection may fail to close; it is gone either way
                pass

    def close(self) -> None:
        with self._lock:
            self._drop()


def _ensure_schema(backend: SQLiteBackend | PostgresBackend, id_type: str) -> None:
    """Create the tables on first use; refuse a schema newer than this code knows."""
    conn: Any = backend._conn
    if isinstance(backend, PostgresBackend):
        with conn.transaction(), conn.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended('jupyter_brain_ledger_schema', 0))")
            _create(lambda sql, params=(): cursor.execute(sql, params), "%s", id_type, backend.url)
            cursor.execute(RESERVE_FUNCTION)
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        _create(lambda sql, params=(): conn.execute(sql, params), "?", id_type, backend.url)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _create(execute: Callable[..., Any], mark: str, id_type: str, url: str) -> None:
    for statement in SCHEMA:
        execute(statement.format(id_type=id_type))
    row = execute(f"SELECT value FROM jupyter_brain_ledger_meta WHERE key = {mark}", ("schema_version",)).fetchone()
    if row is None:
        execute(f"INSERT INTO jupyter_brain_ledger_meta (key, value) VALUES ({mark}, {mark})",
                ("schema_version", str(SCHEMA_VERSION)))
    elif int(row[0]) > SCHEMA_VERSION:
        raise LedgerUnavailable(f"the ledger {_safe_url(url)} has schema version {row[0]}, newer than this "
                                f"jupyter-brain knows ({SCHEMA_VERSION}): upgrade jupyter-brain")


def backend_for(url: str) -> SQLiteBackend | PostgresBackend:
    if url.startswith("sqlite:///"):
        return SQLiteBackend(url)
    return PostgresBackend(url)


def _safe_url(url: str) -> str:
    """The URL without its password."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def now() -> float:
    return time.time()
