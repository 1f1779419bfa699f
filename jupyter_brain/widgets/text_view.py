"""Plain renderings of the event stream: ``TextView`` streams text to a file (terminal
IPython, no widget front-end), ``events_to_markdown`` writes a readable transcript
(nbconvert, logs, ``AgentView.to_markdown``). Both show each thing once, as the AgentView
does (``_answer.py``); the transcript also puts the answer first, then the summary line
and the steps."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from jupyter_brain.agent.citations import sources_markdown
from jupyter_brain.agent.events import EventBase

from . import _answer
from . import _format as fmt
from ._answer import code_argument, output_note, outputs_markdown, plan_turn, preamble, split_turns
from ._fold import Entry, as_entry, fold
from ._header import Header
from ._lines import (
    LOUD_LEVELS,
    ProgressLines,
    _context_pack_line,
    _end_line,
    _fallback_line,
    _figures,
    _memory_line,
    _refusal_line,
    _source_items,
    _start_line,
    _usage_line,
    server_log_line,
    server_log_markdown,
)
from ._live_final import LiveFinal


class TextView:
    """Writes a turn as it streams: answer text raw, thinking indented, one line per
    tool call (code as a fenced Python block), reflection, strategy step and error, and
    the summary line at the end. A terminal cannot move text up, so the process streams
    first; in a strategy turn the labelled text is not printed, its parsed rows are, and
    the final answer streams once its label has come (``_live_final.py``). On a terminal
    each delta is flushed at once (a tty's stdout is line-buffered).

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
        self._fatal = False  # a non-recoverable error was printed (TurnEnd.text repeats it)
        self._held: dict[int, str] = {}  # a strategy turn's text per step, until rows replace it
        self._rows: set[int] = set()  # steps whose strategy rows were printed
        self._final = LiveFinal("")  # a strategy turn's final answer, streamed (set per turn)
        try:
            self._flush_deltas = bool(self.stream.isatty())
        except (AttributeError, ValueError):  # no isatty, or a closed file
            self._flush_deltas = False
        self._progress = ProgressLines()  # a tool's progress: a few lines, not one per notification

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
        if hasattr(self.stream, "flush") and (
            etype in ("step_end", "turn_end") or (self._flush_deltas and etype.endswith("_delta"))
        ):
            self.stream.flush()

    def replay(self, events: Iterable[EventBase | Entry]) -> None:
        for e in fold(list(events)):
            self.handle(e)

    def _on_turn_start(self, e: Entry) -> None:
        self._saw_text = False
        self._fatal = False
        self._held, self._rows = {}, set()
        self._final = LiveFinal(self.header.strategy)
        self._line(f"▶ {_start_line(self.header)}")
        lines = e.get("user_message", "").strip().splitlines()
        for i, line in enumerate(lines):
            self._line(f"  {'You:' if i == 0 else '    '} {line}".rstrip())

    def _on_step_start(self, e: Entry) -> None:
        total = f"/{self.header.max_steps}" if self.header.max_steps else ""
        self._line(f"── step {e['step']}{total} ──")

    def _on_text_delta(self, e: Entry) -> None:
        if self.header.strategy:  # held until the step's rows show whether it was labelled
            step = e["step"]
            held = self._held[step] = self._held.get(step, "") + e["text"]
            self._saw_text = True
            if self._final.live(step):
                self._write(self._final.more(step, held))
            elif (opened := self._final.open(step, held)) is not None:  # "Final Answer:" came
                self._rows_before_final(step, opened.rows, opened.before)
                if not self._line_start:
                    self._write("\n")
                self._write(f"  ◆ {fmt.strategy_text({'kind': 'final_answer'})[0]}: {opened.answer.lstrip()}")
                self._block = ("text", step)
            return
        self._stream_text(e)

    def _rows_before_final(self, step: int, rows: list[Entry], before: str) -> None:
        if step not in self._rows and (head := preamble(before).strip()):
            self._stream_text({"step": step, "text": head + "\n"})
        self._rows.add(step)
        for data in rows:
            self._line("  ◆ {}: {}".format(*fmt.strategy_text(data)))

    def _on_step_end(self, e: Entry) -> None:
        held = self._held.pop(e["step"], "")
        if held and e["step"] not in self._rows:
            self._stream_text({"step": e["step"], "text": held})

    def _stream_text(self, e: Entry) -> None:
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
        code = code_argument(e["name"], e.get("arguments"))
        if code is None:
            self._line(f"  ⚙ {e['name']}{wave} {fmt.one_line_args(e.get('arguments'))}")
            return
        self._line(f"  ⚙ {e['name']}{wave}")
        for line in fmt.fence(code, "python").splitlines():
            self._line(f"    {line}".rstrip())

    def _on_tool_call_end(self, e: Entry) -> None:
        icon = fmt.TOOL_ICON.get(e["status"], "•")
        self._line(f"  {icon} {e['name']} · {e['status']}{fmt.tool_took(e)}")
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
        for out in e.get("outputs") or []:
            if out.get("mime_type") in ("text/plain", "text/markdown"):
                shown = str(out.get("data", "")).rstrip().splitlines()
                for line in shown[: self.preview_lines]:
                    self._line(f"    │ {line}")
                if len(shown) > self.preview_lines:
                    self._line(f"    │ … ({len(shown) - self.preview_lines} more lines)")
            else:
                self._line(f"    {output_note(out)}")

    def _on_tool_progress(self, e: Entry) -> None:
        line = self._progress.line(e)
        if line:
            self._line(line)

    def _on_server_log(self, e: Entry) -> None:
        if e["level"] in LOUD_LEVELS:  # the rest: in the transcript's collapsed log
            self._line(f"  ⚑ {server_log_line(e)}")

    def _on_retry(self, e: Entry) -> None:
        self._saw_text = False  # the failed attempt's text is discarded
        self._held.pop(e["step"], None)
        self._final.forget(e["step"])
        self._line(f"  ↻ {fmt.retry_text(e)}")

    def _on_provider_fallback(self, e: Entry) -> None:
        self._line(f"  ⇄ {_fallback_line(e)}")

    def _on_reflection(self, e: Entry) -> None:
        if e.get("skipped"):
            self._line(f"  ✎ reflection skipped: {e['reflection']}")
            return
        trigger = fmt.trigger_label(e.get("trigger"))
        self._line(f"  ✎ reflection ({trigger}, confidence {e.get('confidence', 0):.0%}):")
        self._write(fmt.reflection_body(e["reflection"]) + "\n", prefix="  │ ")
        if e.get("suggested_action"):
            self._line(f"    suggested: {e['suggested_action']}")

    def _on_strategy_step(self, e: Entry) -> None:
        if self._final.row_event(e["step"]):  # printed when the final answer began
            return
        if self._final.live(e["step"]):  # the final answer, streamed already: end its line
            if not self._line_start:
                self._write("\n")
            self._block = None
            return
        held = self._held.pop(e["step"], "")
        if held and e["step"] not in self._rows and (head := preamble(held).strip()):
            self._stream_text({"step": e["step"], "text": head + "\n"})
        self._rows.add(e["step"])
        label, text = fmt.strategy_text(e.get("data", {}))
        self._line(f"  ◆ {label}: {text}")

    def _on_error(self, e: Entry) -> None:
        self._fatal = self._fatal or e.get("recoverable") is False
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

    def _on_budget_warning(self, e: Entry) -> None:
        self._line(f"  ⚠ {fmt.budget_text(e)}")

    def _on_compaction(self, e: Entry) -> None:
        self._line(f"  ⇣ {fmt.compaction_text(e)}")

    def _on_thinking_phase(self, e: Entry) -> None:
        self._line(f"  ◇ {fmt.thinking_phase_text(e)}")
        for item in (e.get("insights") or [])[-3:]:
            self._line(f"    · {item}")
        if e.get("next_actions"):
            self._line(f"    → next: {e['next_actions']}")

    def _on_memory_recall(self, e: Entry) -> None:
        self._line("  ⌁ Memories used:")
        for m in e.get("memories") or []:
            self._line(f"    · {_memory_line(m)}")

    def _on_context_pack(self, e: Entry) -> None:
        self._line(f"  ▤ {_context_pack_line(e)}")

    def _on_citations(self, e: Entry) -> None:
        # A turn that streamed no text prints TurnEnd.text, which already ends with its Sources.
        items = _source_items(e)
        if self._saw_text and items:
            self._line("Sources:")
            for item in items:
                self._line(f"  - {item}")

    def _on_turn_end(self, e: Entry) -> None:
        if e["status"] == "refused":
            self._line(_refusal_line(e))
        elif not self._saw_text and e.get("text") and not (e["status"] == "error" and self._fatal):
            self._line(e["text"].rstrip())
        self._line(_end_line(self.header, e))
        self._line(f"  {_usage_line(self.header)}")


# ── Markdown transcript ─────────────────────────────────────────────────────


def events_to_markdown(events: Iterable[EventBase | Entry]) -> str:
    """A readable Markdown transcript, per turn: the user's message, the answer (or why the
    turn stopped), the summary line, then the steps — thinking in collapsed quotes, tool rows
    with their code or arguments, results and outputs, reflections, strategy steps."""
    header = Header()
    out: list[str] = []
    for turn in split_turns(fold(list(events))):
        out += _turn_markdown(turn, header)
    return "\n\n".join(b for b in out if b) + "\n"


def _turn_markdown(turn: list[Entry], header: Header) -> list[str]:
    plan = plan_turn(turn)
    head: list[str] = []
    blocks: list[str] = []  # the steps
    citations: list[Entry] = []
    server_logs: list[Entry] = []  # one collapsed block after the steps
    texts_shown: set[int] = set()
    figures = _answer.answer_figures(plan)  # shown with the answer (stored there once), named in their tool row
    with_answer = {(entry_id, url) for entry_id, url, _ in figures}
    saw_text = any(x["type"] == "text_delta" for x in turn)  # (the answer's text is skipped below)
    prev_type = ""
    for e in turn:
        header.update(e)
        etype = e["type"]
        shown = len(blocks)  # (consecutive strategy rows share a block whatever the stream's chunking)
        if id(e) in plan.skip:
            if id(e) == plan.before_at and plan.before:
                blocks.append(plan.before)
            if len(blocks) != shown or etype == "strategy_step":
                prev_type = etype
            continue
        if etype == "turn_start":
            head.append(f"### Agent — {_start_line(header)}")
            if e.get("user_message"):
                head.append(fmt.quote(f"**You:** {e['user_message']}"))
        elif etype == "text_delta" and e["step"] in plan.strategy_steps:
            # Strategy rows stand in for the labelled text: only what precedes the labels.
            saw_text = True
            if e["step"] not in texts_shown:
                texts_shown.add(e["step"])
                whole = "".join(x["text"] for x in turn if x["type"] == "text_delta" and x["step"] == e["step"])
                if preamble(whole).strip():
                    blocks.append(preamble(whole).strip())
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
            code = code_argument(e["name"], e.get("arguments"))
            shown = fmt.fence(code, "python") if code is not None else fmt.fence(fmt.pretty_json(e.get("arguments")), "json")
            blocks.append(f"**Tool** `{e['name']}`{wave}{repaired}\n\n{shown}")
        elif etype == "tool_call_end":
            icon = fmt.TOOL_ICON.get(e["status"], "•")
            line = f"{icon} `{e['name']}` {e['status']}{fmt.tool_took(e)}"
            if e.get("artifact"):
                line += f" · full output: `{e['artifact']}`"
            blocks.append(line)
            if e.get("error"):
                blocks.append(fmt.fence(e["error"]))
            if e.get("result_preview"):
                blocks.append(f"<details><summary>Result</summary>\n\n{fmt.fence(e['result_preview'])}\n\n</details>")
            images = [u for u in e.get("images") or [] if u.startswith("data:image/")]
            blocks += [f"*figure {i} from {e['name']}: shown with the answer*" if (id(e), u) in with_answer
                       else f"![figure {i} from {e['name']}]({u})" for i, u in enumerate(images, 1)]
            blocks += outputs_markdown([o for o in e.get("outputs") or [] if (id(e), _answer.image_url(o)) not in with_answer],
                                       e["name"])
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
        elif etype == "provider_fallback":
            blocks.append(f"*⇄ {_fallback_line(e)}*")
        elif etype == "reflection":
            if e.get("skipped"):
                blocks.append(fmt.quote(f"*Reflection skipped: {e['reflection']}*"))
            else:
                trigger = fmt.trigger_label(e.get("trigger"))
                text = (f"**Reflection** ({trigger}, confidence {e.get('confidence', 0):.0%}): "
                        f"{fmt.reflection_body(e['reflection'])}")
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
        elif etype == "budget_warning":
            blocks.append(f"*⚠ {fmt.budget_text(e)}*")
        elif etype == "context_pack":
            blocks.append(f"*{_context_pack_line(e)}*")
        elif etype == "citations" and saw_text:  # (else TurnEnd.text ends with them)
            citations.append(e)  # after the answer
        elif etype == "memory_recall":
            items = "\n".join(f"- {_memory_line(m)}" for m in e.get("memories") or [])
            blocks.append(f"**Memories used**\n\n{items}")
        elif etype == "approval_request":
            text = f"**Approval needed** for `{e['name']}` ({e.get('effect', 'execute')})"
            diff = (e.get("preview") or {}).get("diff")
            blocks.append(text + (f"\n\n{fmt.fence(diff, 'diff')}" if diff else ""))
        elif etype == "approval_decision":
            blocks.append(f"{'✓' if e['approved'] else '✗'} {fmt.approval_text(e)}")
        elif etype == "server_log":
            server_logs.append(e)
        if len(blocks) != shown or etype == "strategy_step":
            prev_type = etype
    first = [fmt.quote(f"**⚠ Error** `{e['kind']}` ({fmt.error_tail(e)}): {e['message']}") for e in plan.fatal]
    if plan.end is not None and plan.answer_kind == "refused":
        first.append(fmt.quote(f"**{_refusal_line(plan.end)}**"))
    first.append(plan.answer)
    first += [f"![{alt}]({url})" for _, url, alt in figures]
    if citations and plan.answer_kind in ("final", "text"):
        last = citations[-1]
        first.append(sources_markdown(last.get("local") or [], last.get("web") or []))
    if plan.end is not None:
        first.append(f"**{_end_line(header, plan.end)}** · {_usage_line(header, mark=False)}")
    return head + first + blocks + server_log_markdown(server_logs)
