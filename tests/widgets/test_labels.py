"""The views' wording has one source, ``widgets/labels.json``, read by the text and
Markdown views (``_format``) and by the widget (``js/src/format.ts``)."""

from __future__ import annotations

import json
import typing
from pathlib import Path

from jupyter_brain.agent.events import ToolStatus, TurnStatus
from jupyter_brain.widgets import _format as fmt

ROOT = Path(__file__).resolve().parents[2]
LABELS = json.loads((ROOT / "jupyter_brain" / "widgets" / "labels.json").read_text(encoding="utf-8"))


def test_python_views_read_the_shared_wording():
    assert fmt.STATUS_LABEL == LABELS["status_label"]
    assert fmt.STATUS_ICON == LABELS["status_icon"]
    assert fmt.TOOL_ICON == LABELS["tool_icon"]
    assert fmt.STRATEGY_LABEL == LABELS["strategy_label"]
    assert fmt.trigger_label("tool_error") == LABELS["trigger_label"]["tool_error"]
    assert fmt.ESTIMATED_MARK == LABELS["estimated_mark"]


def test_every_status_a_turn_or_tool_can_end_with_has_its_words():
    for status in typing.get_args(TurnStatus):
        assert status in LABELS["status_label"] and status in LABELS["status_icon"], status
    for status in typing.get_args(ToolStatus):
        assert status in LABELS["tool_icon"], status


def test_the_widget_imports_the_same_file_instead_of_a_copy():
    source = (ROOT / "js" / "src" / "format.ts").read_text(encoding="utf-8")
    assert 'from "../../jupyter_brain/widgets/labels.json"' in source
    for words in LABELS["status_label"].values():
        assert f'"{words}"' not in source, words  # no second copy of the wording
