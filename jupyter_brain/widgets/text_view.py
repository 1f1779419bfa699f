"""Plain renderings of the event stream: ``TextView`` streams text to a file (terminal
IPython, no widget front-end), ``events_to_markdown`` writes a readable transcript
(nbconvert, logs, ``AgentView.to_markdown``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from jupyter_brain.agent.events import EventBase

from . import _format as fmt
from ._fold import Entry, as_entry, fold
from ._header import Header


def _usage_line(h: Header) -> str:
    return (
        f"tokens in {fmt.tokens(h.input_tokens)} / out {fmt.tokens(h.output_tokens)}"
        f" / cache read {fmt.tokens(h.cache_read_tokens)}"
        f" / cache write {fmt.tokens(h.cache_creation_tokens)} · cost {fmt.cost(h.cost_usd)}"
        + (f" · {fmt.ESTIMATED_MARK} (the server reported no usage)" if h.usage_estimated else "")
    )


def _refusal_line(e: Entry) -> str:
    return f"⊘ Refused — the model declined to answer: {(e.get('text') or '').strip() or 'no reason given'}"


def _figures(e: Entry) -> str:
    n = len(e.get("images") or [])
    return f"{n} figure{'s' * (n != 1)} (shown to the model)" if n else ""


def _end_line(h: Header, e: Entry) -> str:
    icon = fmt.STATUS_ICON.get(e["status"], "■")
    label = fmt.STATUS_LABEL.get(e["status"], e["status"])
    parts = [f"{icon} {label}", f"{h.steps} step{'s' * (h.steps != 1)}"]
    if h.tool_calls:
        parts.append(f"{h.tool_calls} tool call{'s' * (h.tool_calls != 1)}")
    if h.reflections:
        parts.append(f"{h.reflections} reflection{'s' * (h.reflections != 1)}")
    parts.append(fmt.duration(e.get("duration_ms", 0.0)))
    return " · ".join(parts)


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


class TextView:
    """Writes a turn as it streams: answer text raw, thinking indented, one line per
    tool call, reflection, strategy step and error, and a status line at the end.

    Use ``view.handle`` as the harness's ``on_event`` callback, like ``AgentView``.
    """

    def __init__(self, stream: TextIO | None = None, *, show_thinking: bool = True, preview_lines: int = 6):
        self.stream = stream if stream is not None else sys.stdout
        self.show_thinking = show_thinking
        self.preview_lines = preview_lines
        self.header = Header()
        self._block: tuple[str, int] | None = None  # the streaming block: (kind, step)
        self._line_start = True
        self._saw_text = False  # any answer text this turn (else TurnEnd.text is printed)

    # output helpers --------------------------------------------------------
    def _write(self, text: str, prefix: str = "") -> None:
        if not text:
            return
        if prefix:
            lines = text.split("\n")
            out = []
            for i, line in enumerate(lines):
                if i:
                    out.append("\n")
                if (i or self._line_start) and (line or i < len(lines) - 1):
                    out.append(prefix)
                out.append(line)
            text = "".join(out)
        self.stream.write(text)
        self._line_start = text.endswith("\n")

    def _line(self, text: str) -> None:
        """A whole line of its own, after whatever was streaming."""
        if not self._line_start:
            self.stream.write("\n")
        self.stream.write(text + "\n")
        self._line_start = True
        self._block = None

    # events ---------------------------------------------------------------
    def handle(self, event: EventBase | Entry) -> None:
        e = as_entry(event)
        self.header.update(e)
        etype = e["type"]
        handler = getattr(self, f"_on_{etype}", None)
        if handler is not None:
            handler(e)
        if hasattr(self.stream, "flush") and etype in ("step_end", "turn_end"):
            self.stream.flush()

    def replay(self, events: Iterable[EventBase | Entry]) -> None:
        for e in fold(list(events)):
            self.handle(e)

    def _on_turn_start(self, e: Entry) -> None:
        self._saw_text = False
        self._line(f"▶ {_start_line(self.header)}")
        lines = e.get("user_message", "").strip().splitlines()
        for i, line in enumerate(lines):
            self._line(f"  {'You:' if i == 0 else '    '} {line}".rstrip())

    def _on_step_start(self, e: Entry) -> None:
        total = f"/{self.header.max_steps}" if self.header.max_steps else ""
        self._line(f"── step {e['step']}{total} ──")

    def _on_text_delta(self, e: Entry) -> None:
        if self._block != ("text", e["step"]):
            if not self._line_start:
                self._write("\n")
            self._block = ("text", e["step"])
        self._saw_text = True
        self._write(e["text"])

    def _on_thinking_delta(self, e: Entry) -> None:
        if not self.show_thinking:
            return
        if self._block != ("thinking", e["step"]):
            self._line("  thinking:")
            self._block = ("thinking", e["step"])
        self._write(e["text"], prefix="  │ ")

    def _on_thinking_end(self, e: Entry) -> None:
        if self._block == ("thinking", e["step"]):
            if not self._line_start:
                self._write("\n")
            self._block = None

    def _on_tool_call_args(self, e: Entry) -> None:
        wave = f" [wave {e['wave']}]" if e.get("wave") else ""
        self._line(f"  ⚙ {e['name']}{wave} {fmt.one_line_args(e.get('arguments'))}")

    def _on_tool_call_end(self, e: Entry) -> None:
        icon = fmt.TOOL_ICON.get(e["status"], "•")
        self._line(f"  {icon} {e['name']} · {e['status']} · {fmt.duration(e.get('duration_ms', 0.0))}")
        detail = e.get("error") or e.get("result_preview") or ""
        lines = detail.rstrip().splitlines()
        for line in lines[: self.preview_lines]:
            self._line(f"    │ {line}")
        if len(lines) > self.preview_lines:
            self._line(f"    │ … ({len(lines) - self.preview_lines} more lines)")
        if e.get("artifact"):
            self._line(f"    full output: {e['artifact']}")
        if e.get("images"):
            self._line(f"    {_figures(e)}")

    def _on_retry(self, e: Entry) -> None:
        self._saw_text = False  # the failed attempt's text is discarded
        self._line(f"  ↻ {fmt.retry_text(e)}")

    def _on_reflection(self, e: Entry) -> None:
        if e.get("skipped"):
            self._line(f"  ✎ reflection skipped: {e['reflection']}")
            return
        trigger = fmt.trigger_label(e.get("trigger"))
        self._line(f"  ✎ reflection ({trigger}, confidence {e.get('confidence', 0):.0%}):")
        self._write(e["reflection"].rstrip() + "\n", prefix="  │ ")
        if e.get("suggested_action"):
            self._line(f"    suggested: {e['suggested_action']}")

    def _on_strategy_step(self, e: Entry) -> None:
        label, text = fmt.strategy_text(e.get("data", {}))
        self._line(f"  ◆ {label}: {text}")

    def _on_error(self, e: Entry) -> None:
        self._line(f"  ⚠ error [{e['kind']}]: {e['message']} ({fmt.error_tail(e)})")

    def _on_approval_request(self, e: Entry) -> None:
        self._line(f"  ? approval needed: {e['name']} ({e.get('effect', 'execute')}) {fmt.one_line_args(e.get('arguments'))}")
        preview = e.get("preview") or {}
        if preview.get("diff"):
            lines = preview["diff"].rstrip().splitlines()
            for line in lines[: self.preview_lines * 2]:
                self._line(f"    │ {line}")
            if len(lines) > self.preview_lines * 2:
                self._line(f"    │ … ({len(lines) - self.preview_lines * 2} more lines)")

    def _on_approval_decision(self, e: Entry) -> None:
        self._line(f"  {'✓' if e['approved'] else '✗'} {fmt.approval_text(e)}")

    def _on_context_warning(self, e: Entry) -> None:
        self._line(f"  ◔ {fmt.context_text(e)}")

    def _on_compaction(self, e: Entry) -> None:
        self._line(f"  ⇣ {fmt.compaction_text(e)}")

    def _on_thinking_phase(self, e: Entry) -> None:
        self._line(f"  ◇ {fmt.thinking_phase_text(e)}")
        for item in (e.get("insights") or [])[-3:]:
            self._line(f"    · {item}")
        if e.get("next_actions"):
            self._line(f"    → next: {e['next_actions']}")

    def _on_turn_end(self, e: Entry) -> None:
        if e["status"] == "refused":
            self._line(_refusal_line(e))
        elif not self._saw_text and e.get("text"):
            self._line(e["text"].rstrip())
        self._line(_end_line(self.header, e))
        self._line(f"  {_usage_line(self.header)}")


# ── Markdown transcript ─────────────────────────────────────────────────────


def events_to_markdown(events: Iterable[EventBase | Entry]) -> str:
    """A readable Markdown transcript: thinking in collapsed quotes, tool rows with
    arguments and result previews, reflections, strategy steps, the final status."""
    header = Header()
    blocks: list[str] = []
    saw_text = False
    prev_type = ""
    for e in fold(list(events)):
        header.update(e)
        etype = e["type"]
        if etype == "turn_start":
            saw_text = False
            blocks.append(f"### Agent — {_start_line(header)}")
            if e.get("user_message"):
                blocks.append(fmt.quote(f"**You:** {e['user_message']}"))
        elif etype == "step_start":
            total = f" of {header.max_steps}" if header.max_steps else ""
            blocks.append(f"**Step {e['step']}{total}**")
        elif etype == "text_delta":
            saw_text = True
            blocks.append(e["text"].strip())
        elif etype == "thinking_delta":
            blocks.append(f"<details><summary>Thinking</summary>\n\n{fmt.quote(e['text'])}\n\n</details>")
        elif etype == "tool_call_args":
            wave = f" · wave {e['wave']}" if e.get("wave") else ""
            repaired = " · arguments repaired" if e.get("repaired") else ""
            blocks.append(f"**Tool** `{e['name']}`{wave}{repaired}\n\n{fmt.fence(fmt.pretty_json(e.get('arguments')), 'json')}")
        elif etype == "tool_call_end":
            icon = fmt.TOOL_ICON.get(e["status"], "•")
            line = f"{icon} `{e['name']}` {e['status']} · {fmt.duration(e.get('duration_ms', 0.0))}"
            if e.get("artifact"):
                line += f" · full output: `{e['artifact']}`"
            blocks.append(line)
            if e.get("error"):
                blocks.append(fmt.fence(e["error"]))
            if e.get("result_preview"):
                blocks.append(f"<details><summary>Result</summary>\n\n{fmt.fence(e['result_preview'])}\n\n</details>")
            images = [u for u in e.get("images") or [] if u.startswith("data:image/")]
            blocks += [f"![figure {i} from {e['name']}]({u})" for i, u in enumerate(images, 1)]
        elif etype == "retry":
            saw_text = False
            marks = [i for i, b in enumerate(blocks) if b.startswith((f"**Step {e['step']}", "*↻ retrying"))]
            if marks:  # what the failed attempt showed, struck through as discarded
                start = marks[-1] + 1
                gone = "\n\n".join(blocks[start:])
                del blocks[start:]
                if gone:
                    blocks.append(f"<details><summary>Discarded partial output</summary>\n\n<del>\n\n{gone}"
                                  "\n\n</del>\n\n</details>")
            blocks.append(f"*↻ {fmt.retry_text(e)}*")
        elif etype == "reflection":
            if e.get("skipped"):
                blocks.append(fmt.quote(f"*Reflection skipped: {e['reflection']}*"))
            else:
                trigger = fmt.trigger_label(e.get("trigger"))
                text = f"**Reflection** ({trigger}, confidence {e.get('confidence', 0):.0%}): {e['reflection']}"
                if e.get("suggested_action"):
                    text += f"\n\n*Suggested:* {e['suggested_action']}"
                blocks.append(fmt.quote(text))
        elif etype == "strategy_step":
            label, text = fmt.strategy_text(e.get("data", {}))
            item = f"- **{label}:** {text}"
            if prev_type == "strategy_step":
                blocks[-1] += "\n" + item
            else:
                blocks.append(item)
        elif etype == "error":
            blocks.append(fmt.quote(f"**⚠ Error** `{e['kind']}` ({fmt.error_tail(e)}): {e['message']}"))
        elif etype == "compaction":
            text = fmt.compaction_text(e)
            blocks.append(f"*{text[0].upper()}{text[1:]}*")
        elif etype == "thinking_phase":
            text = fmt.thinking_phase_text(e)
            body = [f"- {item}" for item in e.get("insights") or []]
            if e.get("next_actions"):
                body.append(f"\n*Next:* {e['next_actions']}")
            inner = "\n".join(body) or "(no insights)"
            blocks.append(f"<details><summary>{text[0].upper()}{text[1:]}</summary>\n\n{inner}\n\n</details>")
        elif etype == "context_warning":
            blocks.append(f"*{fmt.context_text(e)}*")
        elif etype == "approval_request":
            text = f"**Approval needed** for `{e['name']}` ({e.get('effect', 'execute')})"
            diff = (e.get("preview") or {}).get("diff")
            blocks.append(text + (f"\n\n{fmt.fence(diff, 'diff')}" if diff else ""))
        elif etype == "approval_decision":
            blocks.append(f"{'✓' if e['approved'] else '✗'} {fmt.approval_text(e)}")
        elif etype == "turn_end":
            if e["status"] == "refused":
                blocks.append(fmt.quote(f"**{_refusal_line(e)}**"))
            elif not saw_text and e.get("text"):
                blocks.append(e["text"].strip())
            blocks.append(f"---\n\n**{_end_line(header, e)}** · {_usage_line(header)}")
        prev_type = etype
    return "\n\n".join(b for b in blocks if b) + "\n"
