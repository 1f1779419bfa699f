"""What the kernel tells the JupyterLab extension: plain JSON dicts, built from a turn.

Kept apart from the comm plumbing (``lab_channel.py``) so each payload is a pure function
of a result and its events, testable without a kernel. Everything here was already masked
by the emitter (events) or is a number; no API key can reach a payload.
"""

from __future__ import annotations

from typing import Any

from .code_cells import CODE_TOOL

MAX_OUTPUT_CHARS = 200_000  # one inserted cell's outputs, all together


def call_outputs(output_text: str, rich: list[dict[str, str]], images: list[str]) -> list[dict[str, Any]]:
    """One ``run_python`` call's outputs as nbformat outputs (what a code cell stores).

    Rich outputs (``ToolCallEnd.outputs``: a DataFrame's HTML, Markdown, a displayed image)
    when the call had them, otherwise its text; then its figures (``data:image/png`` URLs)."""
    outputs: list[dict[str, Any]] = []
    if rich:
        for item in rich:
            mime, data = str(item.get("mime_type") or ""), item.get("data")
            if not mime or data is None:
                continue
            kind = "execute_result" if item.get("role") == "value" else "display_data"
            out: dict[str, Any] = {"output_type": kind, "data": {mime: data}, "metadata": {}}
            if kind == "execute_result":
                out["execution_count"] = None
            outputs.append(out)
    elif output_text.strip() and output_text.strip() != "(no output)":
        outputs.append({"output_type": "stream", "name": "stdout", "text": output_text.rstrip("\n") + "\n"})
    for url in images:
        head, _, b64 = url.partition(",")
        if head.startswith("data:image/") and ";base64" in head and b64:
            mime = head[len("data:"):].split(";")[0]
            outputs.append({"output_type": "display_data", "data": {mime: b64}, "metadata": {}})
    size = 0
    kept: list[dict[str, Any]] = []
    for out in outputs:  # a huge table must not make the notebook unusable
        size += len(str(out.get("data") or out.get("text") or ""))
        if size > MAX_OUTPUT_CHARS:
            kept.append({"output_type": "stream", "name": "stdout", "text": "[more output left out]\n"})
            break
        kept.append(out)
    return kept


def code_cells(result: Any, events: list[Any]) -> list[dict[str, Any]]:
    """One cell per successful ``run_python`` call of the turn, in order, with its outputs."""
    rich = {e.call_id: list(getattr(e, "outputs", []) or []) for e in events
            if getattr(e, "type", "") == "tool_call_end"}
    cells: list[dict[str, Any]] = []
    for call in result.tool_calls:
        if call.name != CODE_TOOL or call.status != "ok":
            continue
        args = call.arguments if isinstance(call.arguments, dict) else {}
        source = str(args.get("code") or "").strip("\n")
        if not source.strip():
            continue
        cells.append({"source": source, "outputs": call_outputs(call.output or "", rich.get(call.call_id, []),
                                                                list(call.images or []))})
    return cells


def cells_message(result: Any, events: list[Any], cell_id: str) -> dict[str, Any]:
    """``{"type": "cells"}``: insert these below the ``%%agent`` cell ``cell_id``."""
    return {"type": "cells", "cell_id": cell_id, "session": result.session_id, "turn": result.turn_id,
            "cells": code_cells(result, events)}


def status_message(session: Any) -> dict[str, Any]:
    """``{"type": "status"}``: the status bar's figures for the current session."""
    summary = session.cost_tracker.summary()
    harness = getattr(session, "last_harness", None)
    ctx = getattr(harness, "context", None)
    cost = summary.get("cost_usd")
    return {
        "type": "status",
        "session": session.name,
        "turns": len(session.results),
        "input_tokens": int(summary.get("input_tokens") or 0),
        "output_tokens": int(summary.get("output_tokens") or 0),
        "cost_usd": float(cost) if isinstance(cost, (int, float)) else None,
        "estimated": bool(summary.get("usage_estimated")),
        "context_level": str(getattr(ctx, "level", "ok")) if ctx is not None else "ok",
        "context_tokens": int(getattr(ctx, "last_tokens", 0) or 0) if ctx is not None else 0,
        "context_ratio": float(getattr(ctx, "ratio", 0.0) or 0.0) if ctx is not None else 0.0,
        "context_budget": int(getattr(harness, "context_budget", 0) or 0) if harness is not None else 0,
    }
