"""Compact folding of an event stream, shared by the widget, the text view and Markdown.

A turn streams thousands of one-token deltas. Views only need each run of consecutive
deltas of the same block (text or thinking of one step, arguments of one tool call) as
one entry (and of a run of one tool call's progress notifications, the latest), so the durable transcript stays linear in the text and a batch of live
events carries each run once. The front-end merges with the same rules
(``js/src/compact.ts``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jupyter_brain.agent.events import EventBase, event_from_dict

Entry = dict[str, Any]

# Delta event types, the field that carries their text, and the key of their block.
_DELTA_FIELD = {"text_delta": "text", "thinking_delta": "text", "tool_call_args_delta": "delta"}
# Kept only where views use them; the rest are per-event bookkeeping (seq) or repeats.
_KEEP_IDS = {"turn_start", "turn_end"}


def as_entry(event: EventBase | Entry) -> Entry:
    """A JSON-ready dict of the event, validated; ids dropped where they only repeat."""
    model = event if isinstance(event, EventBase) else event_from_dict(event)
    data = model.model_dump(mode="json")
    data.pop("seq", None)
    if data["type"] not in _KEEP_IDS:
        data.pop("session_id", None)
        data.pop("turn_id", None)
    return data


class Compactor:
    """Makes entries from events, dropping what views never show twice.

    A turn that streamed its answer also repeats it whole in ``TurnEnd.text``; views
    show the streamed text, so the entry's copy is emptied (the EventLog keeps the
    event as it was). A turn that streamed nothing keeps it: it is the only copy.
    """

    def __init__(self) -> None:
        self._streamed = False

    def entry(self, event: EventBase | Entry) -> Entry:
        data = as_entry(event)
        etype = data["type"]
        if etype == "turn_start":
            self._streamed = False
        elif etype == "text_delta":
            self._streamed = self._streamed or bool(data["text"])
        elif etype == "retry":
            self._streamed = False  # the failed attempt's text is discarded
        elif etype == "turn_end" and self._streamed and data["status"] != "refused":
            data["text"] = ""  # (a refusal keeps its reason: the views' refusal card shows it)
        return data


def _block_key(entry: Entry) -> tuple[Any, ...] | None:
    etype = entry["type"]
    if etype in ("text_delta", "thinking_delta"):
        return (etype, entry["step"])
    if etype == "tool_call_args_delta":
        return (etype, entry["step"], entry["call_id"])
    return None


def _same_progress(last: Entry | None, entry: Entry) -> bool:
    """A progress notification right after another of the same call replaces it."""
    return (last is not None and entry["type"] == "tool_progress" and last["type"] == "tool_progress"
            and last.get("call_id") == entry.get("call_id"))


@dataclass
class Transcript:
    """Append-only list of compact entries; the open delta run is joined lazily.

    Joining on read (not ``+=`` per token) keeps folding linear in the text.
    """

    _entries: list[Entry] = field(default_factory=list)
    _open_key: tuple[Any, ...] | None = None
    _open_parts: list[str] = field(default_factory=list)
    count: int = 0  # raw events folded in

    def add(self, entry: Entry) -> None:
        self.count += 1
        key = _block_key(entry)
        if key is not None and key == self._open_key:
            self._open_parts.append(entry[_DELTA_FIELD[entry["type"]]])
            return
        self._close()
        if _same_progress(self._entries[-1] if self._entries else None, entry):
            self._entries[-1] = dict(entry)  # a tool's progress: only the latest counts
            return
        self._entries.append(dict(entry))
        if key is not None:
            self._open_key = key
            self._open_parts = [entry[_DELTA_FIELD[entry["type"]]]]

    def _close(self) -> None:
        if self._open_key is not None:
            last = self._entries[-1]
            # A new dict, never an in-place edit: earlier snapshots (trait values) share entries.
            self._entries[-1] = {**last, _DELTA_FIELD[last["type"]]: "".join(self._open_parts)}
            self._open_key = None
            self._open_parts = []

    def entries(self) -> list[Entry]:
        """The compact entries (a new list; the open run joined)."""
        self._close_view()
        return list(self._entries)

    def _close_view(self) -> None:
        # Materialise the open run without closing it, so later deltas still merge.
        if self._open_key is not None:
            last = self._entries[-1]
            joined = "".join(self._open_parts)
            self._open_parts = [joined]
            self._entries[-1] = {**last, _DELTA_FIELD[last["type"]]: joined}

    def __len__(self) -> int:
        return len(self._entries)

    def __bool__(self) -> bool:
        return bool(self._entries)


def fold(events: list[EventBase | Entry]) -> list[Entry]:
    """Compact entries for a whole event list (what ``AgentView.replay`` commits)."""
    transcript = Transcript()
    compactor = Compactor()
    for event in events:
        transcript.add(compactor.entry(event))
    return transcript.entries()
