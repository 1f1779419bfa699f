"""One-line renderings of single events, shared by ``TextView`` and the Markdown
transcript (``text_view.py``): the turn's start and end lines, usage, refusals, fallbacks,
memories, sources, and the MCP ones: a tool's progress, a server's log."""

from __future__ import annotations

from typing import Any

from ..turn_costs import RECORDED_MARK
from . import _format as fmt
from ._fold import Entry
from ._header import Header

# Server log levels the text view prints as they come (the others: the transcript only).
LOUD_LEVELS = frozenset({"warning", "error", "critical", "alert", "emergency"})




def _tokens(u: Any) -> str:
    return (
        f"in {fmt.tokens(u.get('input_tokens', 0))} / out {fmt.tokens(u.get('output_tokens', 0))}"
        f" / cache read {fmt.tokens(u.get('cache_read_tokens', 0))}"
        f" / cache write {fmt.tokens(u.get('cache_creation_tokens', 0))}"
    )


def _usage_line(h: Header, *, mark: bool = True) -> str:
    """``tokens in 1,234 / out 56 / …``: what the turn used; a replayed turn's recorded figures
    (after ``RECORDED_MARK`` when ``mark``: the end line before it has the mark already)."""
    if h.replayed and h.recorded is not None:
        return (RECORDED_MARK if mark else "") + f"tokens {_tokens(h.recorded)}"
    partly = ""
    if h.recorded is not None:  # partly replayed: the replayed part's recorded figures beside
        partly = f" · replayed part, recorded: {_tokens(h.recorded)} · {_cost(h.recorded.get('cost_usd'))}"
    return (
        f"tokens {_tokens(h.__dict__)}"
        + (f" · {fmt.ESTIMATED_MARK} (the server reported no usage)" if h.usage_estimated else "")
        + partly
    )


def _cost(value: float | None) -> str:
    return "price unknown" if value is None else fmt.cost(value)


def _refusal_line(e: Entry) -> str:
    return f"⊘ Refused — the model declined to answer: {(e.get('text') or '').strip() or 'no reason given'}"


def _figures(e: Entry) -> str:
    n = len(e.get("images") or [])
    return f"{n} figure{'s' * (n != 1)} (shown to the model)" if n else ""


def _context_pack_line(e: Entry) -> str:
    """``Context pack: 3 passages (a.py:10, nb.ipynb#cell-2, …)``."""
    anchors = [str(p.get("anchor", "")) for p in e.get("passages") or []]
    shown = ", ".join(anchors[:4]) + (", …" if len(anchors) > 4 else "")
    return f"Context pack: {len(anchors)} passage{'s' * (len(anchors) != 1)}" + (f" ({shown})" if shown else "")


def _source_items(e: Entry) -> list[str]:
    """A Citations event's sources: workspace anchors, then web pages (title — url)."""
    items = [str(a) for a in e.get("local") or []]
    items += [f"{w.get('title') or w.get('url', '')} — {w.get('url', '')}" for w in e.get("web") or []]
    return items


def _start_line(h: Header) -> str:
    parts = [f"Turn {h.turn}"]
    if h.model_label:
        parts.append(h.model_label)
    if h.think_level and h.think_level != "off":
        parts.append(f"think {h.think_level}")
    if h.strategy:
        parts.append(f"strategy {h.strategy}")
    if h.session_id:
        parts.append(f"session {h.session_id}")
    return " · ".join(parts)


def _end_line(h: Header, e: Entry) -> str:
    """The process summary: ``✓ completed · 4 steps · 3 tools · 1 reflection · 12.4 s · $0.0123``."""
    icon = fmt.STATUS_ICON.get(e["status"], "■")
    label = fmt.STATUS_LABEL.get(e["status"], e["status"])
    parts = [f"{icon} {label}", f"{h.steps} step{'s' * (h.steps != 1)}"]
    if h.tool_calls:
        parts.append(f"{h.tool_calls} tool{'s' * (h.tool_calls != 1)}")
    if h.reflections:
        parts.append(f"{h.reflections} reflection{'s' * (h.reflections != 1)}")
    parts.append(fmt.duration(e.get("duration_ms", 0.0)))
    if h.replayed and h.recorded is not None:
        parts.append(RECORDED_MARK + _cost(h.recorded.get("cost_usd")))
    elif h.cost_usd is not None:
        parts.append(fmt.cost(h.cost_usd))
    return " · ".join(parts)


def _memory_line(m: dict) -> str:
    """One recalled memory: its id and text (the text view's and the transcript's)."""
    return f"[{m.get('id', '?')}] {' '.join(str(m.get('text', '')).split())}"


def _fallback_line(e: Entry) -> str:
    """``anthropic:… failed (overloaded) — continued with ollama:…`` (a provider chain)."""
    return f"{e['failed']} failed ({e.get('kind', 'other')}) — continued with {e['next']}"


def progress_text(e: Entry) -> str:
    """``3/5 · message``; ``40% · message`` when the total is 100; ``3`` without a total."""
    def n(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else f"{x:.1f}"

    total = e.get("total") or 0
    count = f"{n(e['progress'])}%" if total == 100 else f"{n(e['progress'])}/{n(total)}" if total > 0 else n(e["progress"])
    return f"{count} · {e['message']}" if e.get("message") else count


class ProgressLines:
    """Which progress notifications a text stream prints: a changed message, or each
    further quarter of the total (a server may send hundreds; a terminal wants a few)."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[int, str]] = {}

    def line(self, e: Entry) -> str:
        total = e.get("total") or 0
        quarter = int(4 * e["progress"] / total) if total > 0 else -1
        mark = (quarter, str(e.get("message") or ""))
        if self._last.get(e["call_id"]) == mark:
            return ""
        self._last[e["call_id"]] = mark
        return f"    ⋯ {progress_text(e)}"


def server_log_line(e: Entry) -> str:
    logger = f" ({e['logger']})" if e.get("logger") else ""
    return f"{e['server']}{logger} {e['level']}: {e['message']}"


def server_log_markdown(entries: list[Entry]) -> list[str]:
    """A turn's server log lines as one collapsed block (nothing without any)."""
    if not entries:
        return []
    lines = "\n".join(server_log_line(e) for e in entries)
    plural = "s" if len(entries) != 1 else ""
    return [f"<details><summary>MCP server log ({len(entries)} line{plural})</summary>\n\n{fmt.fence(lines)}\n\n</details>"]
