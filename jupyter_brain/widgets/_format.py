"""Small formatting helpers shared by the text and Markdown renderings. The wording of
statuses, icons and strategy steps comes from ``labels.json``, which the widget's
``js/src/format.ts`` reads too; the helpers' logic has a twin there (keep them alike)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_LABELS: dict[str, Any] = json.loads(Path(__file__).with_name("labels.json").read_text(encoding="utf-8"))
STATUS_LABEL: dict[str, str] = _LABELS["status_label"]
STATUS_ICON: dict[str, str] = _LABELS["status_icon"]
TOOL_ICON: dict[str, str] = _LABELS["tool_icon"]
STRATEGY_LABEL: dict[str, str] = _LABELS["strategy_label"]
TRIGGER_LABEL: dict[str, str] = _LABELS["trigger_label"]
ESTIMATED_MARK: str = _LABELS["estimated_mark"]


def trigger_label(trigger: str | None) -> str:
    return TRIGGER_LABEL.get(trigger or "periodic", "periodic")


def retry_text(e: dict[str, Any]) -> str:
    """``retrying 2/3 after: overloaded`` (the failed attempt's output is discarded)."""
    wait = f" in {e['delay_s']:.1f} s" if e.get("delay_s") else ""
    return f"retrying {e['attempt']}/{e['max_attempts']} after: {e['reason']}{wait} (partial output discarded)"


def duration(ms: float) -> str:
    """``850 ms``, ``2.3 s``, ``1 min 05 s``."""
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest:02d} s"


def tool_took(e: Mapping[str, Any]) -> str:
    """`` · 850 ms`` after a tool call's status; nothing for a failed call with no measured
    duration (one the turn's end gave up: interrupted), which is not "0 ms"."""
    ms = e.get("duration_ms") or 0.0
    return f" · {duration(ms)}" if ms or e.get("status") == "ok" else ""


def tokens(n: int) -> str:
    return f"{n:,}"


def cost(usd: float | None) -> str:
    if usd is None:
        return "—"
    return f"${usd:.4f}" if usd < 1 else f"${usd:.2f}"


def pretty_json(value: Any) -> str:
    """Arguments as indented JSON; strings that hold JSON are parsed first."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def strategy_text(data: dict[str, Any]) -> tuple[str, str]:
    """(label, text) of a strategy step dict (a ``StrategyStep`` dumped: ``kind`` + fields)."""
    kind = str(data.get("kind", "step"))
    label = str(data.get("label") or STRATEGY_LABEL.get(kind, kind.replace("_", " ").capitalize()))
    if kind == "action":
        args = data.get("args")
        text = f"{data.get('tool', '')}({json.dumps(args, ensure_ascii=False, default=str) if args else ''})"
    elif kind == "reflection":
        text = str(data.get("critique", ""))
        if data.get("revised_plan"):
            text += f" → revised plan: {data['revised_plan']}"
    elif kind == "branch":
        selected = " (selected)" if data.get("selected") else ""
        label = f"Branch {data.get('branch_id', '?')}"
        text = f"score {float(data.get('score', 0)):.2f}{selected}: {data.get('thought', '')}"
    else:
        text = str(data.get("text", data.get("thought", "")))
    return label, text


def fence(text: str, lang: str = "") -> str:
    """A Markdown code fence longer than any backtick run inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.rstrip().splitlines() or [""])


def error_tail(e: dict[str, Any]) -> str:
    """Whether the agent went on after an error, or the turn ended (the session is fine)."""
    if e.get("recoverable", True):
        return "the agent continues"
    return "the turn stopped; the session keeps its history and is ready for the next cell"


def one_line_args(arguments: Any, limit: int = 100) -> str:
    text = " ".join(pretty_json(arguments).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


APPROVAL_BY = {
    "user": "by you",
    "timeout": "no answer before the approval timeout",
    "no_frontend": "no way to ask (no widget front-end and no stdin)",
    "policy": "by the permission settings",
    "error": "the approval prompt failed",
}


def approval_text(e: dict[str, Any]) -> str:
    verdict = "approved" if e.get("approved") else "denied"
    why = APPROVAL_BY.get(e.get("by", "user"), e.get("by", ""))
    channel = f" in the {e['channel']}" if e.get("channel") and e.get("by") == "user" else ""
    return f"{verdict}{channel} ({why})"


def context_text(e: dict[str, Any]) -> str:
    window = e.get("window") or 0
    share = f" ({e['tokens'] / window:.0%} of {tokens(window)})" if window else ""
    if e.get("level") == "ok":
        return f"context back under the warning level: {tokens(e['tokens'])} tokens{share}"
    return f"context {e.get('level')}: {tokens(e['tokens'])} tokens{share}"


def budget_text(e: dict[str, Any]) -> str:
    """``Budget: 80% of this turn's cost cap used: $0.0800 of $0.1000`` (a BudgetWarning)."""
    return "Budget: " + str(e.get("message") or f"{e.get('spent')} of {e.get('cap')} used")


def thinking_phase_text(e: dict[str, Any]) -> str:
    """One line for a thinking phase: strategy, tokens saved, model calls, fallback."""
    if not e.get("tokens_before") and e.get("fallback"):
        return f"thinking phase ({e.get('strategy', '')}) skipped: {e['fallback']}"
    saved = max(0, e.get("tokens_before", 0) - e.get("tokens_after", 0))
    calls = f", {e['model_calls']} model call ({tokens(e.get('thinking_tokens', 0))} tokens)" if e.get("model_calls") else ""
    fallback = f"; {e['fallback']}" if e.get("fallback") else ""
    return (f"thinking phase ({e.get('strategy', '')}): history {tokens(e.get('tokens_before', 0))} → "
            f"{tokens(e.get('tokens_after', 0))} tokens, {tokens(saved)} saved{calls}{fallback}")


def compaction_text(e: dict[str, Any]) -> str:
    msgs = ""
    if e.get("messages_before") or e.get("messages_after"):
        msgs = f", {e.get('messages_before', 0)} → {e.get('messages_after', 0)} messages"
    fallback = f"; {e['fallback']}" if e.get("fallback") else ""
    return (f"history compacted ({e['strategy']}): {tokens(e['tokens_before'])} → "
            f"{tokens(e['tokens_after'])} tokens{msgs}{fallback}")


_FENCE = re.compile(r"\s{0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+).*?(?<!`)\1(?!`)")
_DOLLAR = re.compile(r"(\\*)\$")
DOLLAR = "<span>&#36;</span>"  # a "$" that neither MathJax nor Markdown export changes


def escape_dollars(markdown: str) -> str:
    r"""Dollar signs outside code as ``<span>&#36;</span>``, for Markdown that JupyterLab
    renders and that exports (``nbconvert --to markdown``, GitHub) show as written.

    JupyterLab typesets ``$…$`` in rendered Markdown as LaTeX, twice over: its Markdown step
    lifts ``$…$`` pairs out of the source before parsing, and MathJax then scans the HTML's
    text. The entity has no ``$`` for the first; the element ends MathJax's run of text (it
    never pairs delimiters across an element), so "from $57,100 to $44,900" stays text.
    A plain Markdown renderer shows the same ``$`` (the old ``\\$`` form showed ``\$``
    there). Fenced code, inline code spans and HTML lines are left as they are."""
    if "$" not in markdown:
        return markdown
    out: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened is not None and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
        elif opened is not None:
            fence = opened.group(1)
        elif "$" in line and not line.lstrip().startswith("<"):
            line = _escape_outside_code_spans(line)
        out.append(line)
    return "\n".join(out)


def _escaped(match: re.Match[str]) -> str:
    return match.group(0) if len(match.group(1)) >= 2 else DOLLAR


def _escape_outside_code_spans(line: str) -> str:
    parts, at = [], 0
    for span in _CODE_SPAN.finditer(line):
        parts += [_DOLLAR.sub(_escaped, line[at:span.start()]), span.group(0)]
        at = span.end()
    parts.append(_DOLLAR.sub(_escaped, line[at:]))
    return "".join(parts)


# A reflection's "Confidence: 0.9" and "Next: …" lines: the card shows them as its bar and
# its "Suggested" line, so its text leaves them out (as js/src/parts/cards.ts reflectionBody).
_REFLECTION_FIELD_LINE = re.compile(
    r"^\s*(?:[-*>]\s+)?[*_]*(?:confidence|next|suggested action)[*_]*\s*[:=][^\n]*(?:\n|$)", re.I | re.M
)


def reflection_body(text: str) -> str:
    """A reflection's text without the lines its confidence and next step were read from."""
    body = _REFLECTION_FIELD_LINE.sub("", text).strip()
    return body or text.strip()
