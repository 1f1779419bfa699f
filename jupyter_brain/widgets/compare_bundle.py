"""A finished comparison as one output bundle, so a saved notebook carries no widget.

A live ``CompareView`` is an anywidget: a notebook saved without widget state (JupyterLab's
default), reopened in a new kernel, showed "Error displaying widget: model not found"
where the comparison was (issue #40). Once every run has ended nothing in it changes any
more (a "Mark best" click goes through the JupyterLab extension's comm), so, as a finished
``%%agent`` turn does (``turn_bundle.py``), the cell's output becomes plain data:

* ``application/vnd.jupyter-brain.compare+json`` — the view's whole state (columns and
  their compact transcripts, table rows, summary, trees, winner, notes), which the
  JupyterLab extension draws with the live view's renderer (``js/src/compare_bundle.ts``);
* ``text/markdown`` — the tables and each run's answer, what VS Code, nbviewer, GitHub
  and ``nbconvert`` show where the extension is absent;
* ``text/plain`` — one line.
"""

from __future__ import annotations

from typing import Any

__all__ = ["COMPARE_BUNDLE_VERSION", "COMPARE_MIME", "compare_bundle"]

COMPARE_MIME = "application/vnd.jupyter-brain.compare+json"
COMPARE_BUNDLE_VERSION = 1


def compare_bundle(state: dict[str, Any], markdown: str, plain: str) -> dict[str, Any]:
    """The output bundle of a finished comparison (``state``: the view's synced traits)."""
    data: dict[str, Any] = {COMPARE_MIME: {"version": COMPARE_BUNDLE_VERSION, **state}, "text/plain": plain}
    if markdown:
        data["text/markdown"] = markdown
    return data
