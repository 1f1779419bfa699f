"""Write the event JSON schema the front-end's TypeScript types are generated from.

``python -m jupyter_brain.widgets._schema [OUT]`` prints the schema (or writes it to
OUT). ``js/scripts/gen-types.mjs`` runs it during ``npm run build``; where the package
can't be imported (the isolated build env of ``pip install .``), the build falls back to
the committed snapshot ``js/schema/events.schema.json``, which a test keeps in sync.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from jupyter_brain.agent.events import event_json_schema


def schema_text(schema: dict[str, Any] | None = None) -> str:
    """Canonical text form (sorted keys, stable indentation) so snapshots diff cleanly."""
    return json.dumps(event_json_schema() if schema is None else schema, indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = schema_text()
    if argv:
        Path(argv[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
