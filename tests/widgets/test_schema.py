"""The committed front-end schema snapshot matches the event models (``widgets/_schema.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from jupyter_brain.agent.events import event_json_schema
from jupyter_brain.widgets._schema import schema_text

ROOT = Path(__file__).resolve().parents[2]


def test_committed_schema_snapshot_matches_the_event_models() -> None:
    snapshot = ROOT / "js" / "schema" / "events.schema.json"
    assert json.loads(snapshot.read_text()) == event_json_schema(), (
        "js/schema/events.schema.json is stale: run `npm run build` in js/ (or "
        "`python -m jupyter_brain.widgets._schema js/schema/events.schema.json`) and commit it"
    )
    assert snapshot.read_text() == schema_text()
