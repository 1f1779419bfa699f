"""How every SQLite file is opened, and tables kept beside the event log."""

from __future__ import annotations

import sqlite3
import threading

from jupyter_brain.agent.decisions.sqlite import SQLiteDecisionStore
from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.events.database import Database, connect
from jupyter_brain.agent.memory.sqlite import SQLiteMemory

SCHEMA = "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL);"


def test_a_file_is_created_with_its_folder_in_wal_mode(tmp_path):
    path = tmp_path / "deep" / "er" / "x.sqlite"
    db = connect(path)
    assert path.exists()
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    db.close()


def test_every_store_opens_its_file_the_same_way(tmp_path):
    log = EventLog(tmp_path / "events.sqlite")
    memory = SQLiteMemory(tmp_path)
    learner_db = Database(tmp_path / "own.sqlite", SCHEMA)
    for connection in (log.shared_connection()[0], memory._db, learner_db.connection):
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    log.close()


def test_beside_the_log_a_table_shares_its_connection_lock_and_masking(tmp_path):
    log = EventLog(tmp_path / "events.sqlite", redact=lambda text: text.replace("sk-secret", "[KEY]"))
    db = Database(log, SCHEMA)
    assert (db.connection, db.lock) == log.shared_connection()
    assert db.scrub("key sk-secret") == "key [KEY]"
    with db.lock:
        db.connection.execute("INSERT INTO notes(text) VALUES (?)", (db.scrub("sk-secret"),))
    log.close()
    with sqlite3.connect(tmp_path / "events.sqlite") as other:  # one file: the log's
        assert other.execute("SELECT text FROM notes").fetchall() == [("[KEY]",)]


def test_a_table_in_a_file_of_its_own_is_usable_from_any_thread(tmp_path):
    db = Database(tmp_path / "own.sqlite", SCHEMA)
    assert db.scrub("sk-secret") == "sk-secret"  # no log, no masking of its own

    def write(i: int) -> None:
        with db.lock:
            db.connection.execute("INSERT INTO notes(text) VALUES (?)", (f"n{i}",))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert db.connection.execute("SELECT COUNT(*) FROM notes").fetchone()[0] == 8
    store = SQLiteDecisionStore(tmp_path / "decisions.sqlite")
    assert store.records() == []
