"""nbval, taught ``update_display_data``, so it checks the outputs a notebook really saves.

An agent view is displayed (with a display id) before its turn starts, and re-published
with ``update_display_data`` when the turn ends: that update adds the Markdown transcript
(``text/markdown``) and the final ``text/plain``, which is what JupyterLab, nbclient (so
``scripts/execute_notebooks.py``) and GitHub keep. nbval 0.11 records only ``display_data``,
``execute_result``, ``stream`` and ``error`` and drops updates ("unhandled iopub msg"), so it
would compare the saved transcript with the empty view of the turn's first moment.

Here the iopub messages of a cell that shows such a display are held until the cell's
``idle`` status; an update is applied to the display it names, as a front-end does, and then
the messages are handed to nbval in their order. An update of a display shown by an earlier
cell is dropped, as before (no notebook here does that). Nothing else changes.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest

try:
    from nbval.plugin import IPyNbFile
except ImportError:  # nbval not installed: nothing to teach
    IPyNbFile = None


def _parent(msg: dict[str, Any]) -> Any:
    return msg["parent_header"].get("msg_id")


def _held_messages(get: Any) -> Any:
    def get_kernel_message(self: Any, timeout: float | None = None, stream: str = "iopub") -> dict[str, Any]:
        if stream != "iopub":
            return get(self, timeout=timeout, stream=stream)
        ready: deque[dict[str, Any]] = self.__dict__.setdefault("_held_ready", deque())
        if ready:
            return ready.popleft()
        held: list[dict[str, Any]] = []
        shown: dict[str, dict[str, Any]] = {}  # display id -> the held display_data's content
        while True:
            msg = get(self, timeout=timeout, stream=stream)
            kind, content = msg["msg_type"], msg["content"]
            display_id = (content.get("transient") or {}).get("display_id")
            if kind == "update_display_data":
                if display_id in shown:
                    shown[display_id]["data"] = content["data"]
                    shown[display_id]["metadata"] = content.get("metadata", {})
                continue
            if kind == "display_data" and display_id:
                shown[display_id] = content
            if not held and not shown:
                return msg  # nothing to hold: the common case
            held.append(msg)
            if kind == "status" and content.get("execution_state") == "idle" and _parent(msg) == _parent(held[0]):
                ready.extend(held[1:])  # the cell is done: its messages, updated, in their order
                return held[0]

    return get_kernel_message


if IPyNbFile is not None and not getattr(IPyNbFile.get_kernel_message, "applies_display_updates", False):
    IPyNbFile.get_kernel_message = _held_messages(IPyNbFile.get_kernel_message)
    IPyNbFile.get_kernel_message.applies_display_updates = True


# A finished %%agent turn's output also carries application/vnd.jupyter-brain.turn+json
# (#24: what the JupyterLab extension draws), a finished %%compare's
# application/vnd.jupyter-brain.compare+json (#40). Each holds the same turn or comparison as
# the compared text/markdown, plus event timestamps, ids and wall times that differ on every
# run: nbval skips them, as it skips a widget's model id.
TURN_MIME = "application/vnd.jupyter-brain.turn+json"
COMPARE_MIME = "application/vnd.jupyter-brain.compare+json"


def _skipping_turn_json(init: Any) -> Any:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.skip_compare = (*self.skip_compare, TURN_MIME, COMPARE_MIME)

    return __init__


if IPyNbFile is not None and not getattr(IPyNbFile.__init__, "skips_turn_json", False):
    IPyNbFile.__init__ = _skipping_turn_json(IPyNbFile.__init__)
    IPyNbFile.__init__.skips_turn_json = True


# A notebook's kernel is told its notebook (JPY_SESSION_NAME), as jupyter-server tells it and
# as scripts/execute_notebooks.py does when it saves the outputs: the session is named after
# the notebook (`session quickstart`) in both.
def _naming_the_notebook(setup: Any) -> Any:
    def naming_setup(self: Any) -> None:
        import os

        before = os.environ.get("JPY_SESSION_NAME")
        os.environ["JPY_SESSION_NAME"] = str(self.fspath)
        try:
            setup(self)
        finally:
            if before is None:
                os.environ.pop("JPY_SESSION_NAME", None)
            else:
                os.environ["JPY_SESSION_NAME"] = before

    return naming_setup


if IPyNbFile is not None and not getattr(IPyNbFile.setup, "names_the_notebook", False):
    IPyNbFile.setup = _naming_the_notebook(IPyNbFile.setup)
    IPyNbFile.setup.names_the_notebook = True


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """A notebook's cells run in a real kernel: nbval's items are marked ``kernel``, so
    ``-m kernel`` selects them with the other kernel tests (scripts/test.sh)."""
    if IPyNbFile is None:
        return
    for item in items:
        if isinstance(item.parent, IPyNbFile):
            item.add_marker(pytest.mark.kernel)
