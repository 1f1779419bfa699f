"""``%agent remember / memory / forget``: the project folder's episodic memory by hand.

The memories are ``<data_dir>/memory.sqlite`` (``SQLiteMemory``), shared by every session
and kernel of the folder; ``AgentMagics.memory`` decides whether turns recall them
(``manual``, ``auto``) and whether the model adds its own (``auto``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from IPython.core.error import UsageError

from .text import clip

# Subcommands whose rest of line is free text, passed as typed (an apostrophe is no quote).
FREE_TEXT = frozenset({"remember", "memory"})
LIST_LIMIT = 50
SEARCH_K = 20


def cmd_remember(magics: Any, rest: list[str]) -> None:
    """Keep one fact for later turns of any session in this folder."""
    text = _unquote(" ".join(rest))
    if not text:
        raise UsageError("%agent remember TEXT: write the fact to keep, e.g. %agent remember revenue is in US dollars")
    store = magics.manager.memory
    before = len(store)
    try:
        memory = store.add(text, "user", session_id=magics.manager.current.name)
    except ValueError as exc:
        raise UsageError(f"%agent remember: {exc}") from None
    if len(store) == before:
        print(f"already remembered as {memory.id}: {memory.text}")
    else:
        print(f"remembered {memory.id}: {memory.text}")
    if magics.memory == "off":
        print('note: memory is off, so turns do not recall it yet: %agent config memory=manual (or auto)')


def cmd_memory(magics: Any, rest: list[str]) -> None:
    """All memories (the latest ``LIST_LIMIT``), or those matching a query with their scores."""
    store = magics.manager.memory
    query = _unquote(" ".join(rest))
    total = len(store)
    print(f"memory {magics.memory} · {total} memor{'y' if total == 1 else 'ies'} "
          f"(memory.sqlite beside the event log, in AgentMagics.data_dir)")
    if query:
        found = store.search(query, SEARCH_K)
        if not found:
            print(f"no memory matches {query!r}")
        for m in found:
            print(f"  {m.id:<6} {m.score:6.2f}  {clip(m.text, 110)}  ({_origin(m.source, m.created)})")
        return
    if not total:
        print("no memories yet: %agent remember TEXT adds one; with memory=auto the model adds its own")
        return
    shown = store.list(LIST_LIMIT)
    if total > len(shown):
        print(f"  (the latest {len(shown)}; %agent memory QUERY searches them all)")
    for m in shown:
        print(f"  {m.id:<6} {clip(m.text, 110)}  ({_origin(m.source, m.created)})")


def cmd_forget(magics: Any, rest: list[str]) -> None:
    """Delete memories by id (``%agent forget m3 m7``)."""
    if not rest:
        raise UsageError("%agent forget ID [ID ...]: the ids are in %agent memory (e.g. m3)")
    store = magics.manager.memory
    for item in rest:
        try:
            memory = store.get(item)
        except ValueError as exc:
            raise UsageError(f"%agent forget: {exc}") from None
        if memory is None:
            raise UsageError(f"%agent forget: no memory {item!r}; %agent memory lists them")
        store.forget(memory.id)
        print(f"forgot {memory.id}: {clip(memory.text, 110)}")


def _origin(source: str, created: float) -> str:
    when = dt.datetime.fromtimestamp(created).strftime("%Y-%m-%d %H:%M")
    if source.startswith("turn:"):
        return f"from a turn of session {source[5:].split('/')[0]}, {when}"
    return f"{source or 'added'}, {when}"


def _unquote(text: str) -> str:
    """The text without one pair of quotes around all of it."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text
