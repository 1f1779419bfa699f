"""The event schema: every event type round-trips through dicts and JSON, and is in the schema."""

from __future__ import annotations

import json

import pytest

from jupyter_brain.agent.events import event_from_dict, event_json_schema

from .event_samples import all_kinds

# ── event models ─────────────────────────────────────────────────────────────


def test_every_event_type_round_trips_through_dict_and_json():
    events = all_kinds()
    assert len({e.type for e in events}) == 16
    for e in events:
        assert event_from_dict(e.model_dump()) == e
        assert event_from_dict(json.loads(e.model_dump_json())) == e


def test_events_forbid_unknown_fields():
    with pytest.raises(Exception):
        event_from_dict({"type": "step_start", "step": 1, "bogus": 2})
    with pytest.raises(Exception):
        event_from_dict({"type": "nope"})


def test_json_schema_covers_every_type():
    schema = json.dumps(event_json_schema())
    for e in all_kinds():
        assert f'"{e.type}"' in schema


def test_package_reexports_schema_and_store():
    from jupyter_brain.agent import events
    from jupyter_brain.agent.events import schema, store

    for name in events.__all__:
        assert getattr(events, name) is (getattr(schema, name, None) or getattr(store, name)), name
    assert events.EventLog is store.EventLog and events.TurnStart is schema.TurnStart
