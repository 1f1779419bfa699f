"""What a turn's plain renderings show first, and what they then leave out of the steps.

The text view and the Markdown transcript read like the AgentView: the answer first, then
the process, each thing once. So, per turn (folded entries): the answer is the strategy's
Final Answer when it parsed one, else the text of the last step that wrote any, else
``TurnEnd.text``; the step text it came from is not repeated. In a step with strategy rows,
the rows stand in for the labelled text they were parsed from (only the text before the
first label stays). A fatal error is shown once, in the answer's place. Code arguments
(``run_python``'s ``code``) are shown as Python, not JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

Entry = dict[str, Any]

# A label line ("Thought:", "**Final Answer:**", "- Action:", "### Plan:", "Candidate 2:"),
# as js/src/parts/strategy.ts LABEL_LINE.
_LABEL_LINE = re.compile(
    r"^\s*(?:[-*>]\s+)?(?:#+\s*)?(?:\*\*|__)?\s*[A-Za-z][A-Za-z ]{0,24}\d*\s*(?:\*\*|__)?\s*:", re.M
)
_DECISION_LINE = re.compile(r"^\s*=+[^\n]*=+\s*$", re.M)
# A "Final Answer:" label line, as js/src/parts/strategy.ts FINAL_LINE.
_FINAL_LINE = re.compile(
    r"^\s*(?:[-*>]\s+)?(?:#+\s*)?(?:(?:\*\*|__)\s*final\s+answer\s*(?:\*\*|__)?\s*:\s*(?:\*\*|__)?"
    r"|final\s+answer\s*:)[ \t]*", re.M | re.I
)


def split_final_answer(text: str) -> tuple[str, str] | None:
    """Text written without a strategy that still labels its answer ("Final Answer: …"): the
    text before the last such line and the answer after it, without the label; else None."""
    matches = list(_FINAL_LINE.finditer(text))
    if not matches:
        return None
    last = matches[-1]
    answer = text[last.end():].strip()
    return (text[: last.start()].strip(), answer) if answer else None


def preamble(text: str) -> str:
    """The model's text before its first labelled step (no strategy step holds it)."""
    m = _LABEL_LINE.search(text)
    if m is None:
        return text  # no label at all: the text is the model's own, kept as it is
    return _DECISION_LINE.sub("", text[: m.start()]).strip()


# A prompt that asks for a figure ("Plot it.") or an answer that refers to one ("the plot
# below"): the turn's figures then show with the answer, above the fold (as
# js/src/parts/answer_figures.ts FIGURE_WORDS).
_FIGURE_WORDS = re.compile(r"\b(?:plot(?:s|ted)?|charts?|graphs?|figures?|histograms?|visuali[sz]e|draw)\b", re.I)
MAX_ANSWER_FIGURES = 4


def wants_figures(prompt: str, answer: str) -> bool:
    """Whether the turn's figures belong with its answer."""
    return bool(_FIGURE_WORDS.search(prompt or "") or _FIGURE_WORDS.search(answer or ""))


def answer_figures(plan: TurnPlan) -> list[tuple[int, str, str]]:
    """The figures shown with a completed turn's answer: ``(id of its tool_call_end, data URL,
    alt text)``, at most ``MAX_ANSWER_FIGURES``; none unless the prompt or the answer asks."""
    end = plan.end
    if end is None or end.get("status") != "completed" or not plan.answer:
        return []
    start = next((e for e in plan.entries if e["type"] == "turn_start"), None)
    if not wants_figures(str((start or {}).get("user_message") or ""), plan.answer):
        return []
    out: list[tuple[int, str, str]] = []
    for e in plan.entries:
        if e["type"] != "tool_call_end":
            continue
        urls = [u for u in e.get("images") or [] if str(u).startswith(("data:image/png;", "data:image/jpeg;"))]
        urls += [image_url(o) for o in e.get("outputs") or [] if o.get("mime_type") in ("image/png", "image/jpeg")
                 and o.get("data")]
        out += [(id(e), url, f"figure {i} from {e['name']}") for i, url in enumerate(urls, 1)]
    return out[:MAX_ANSWER_FIGURES]


def image_url(output: Entry) -> str:
    """An image output (``{"mime_type", "data"}``) as a data URL."""
    return f"data:{output.get('mime_type')};base64,{''.join(str(output.get('data', '')).split())}"


def code_argument(name: str, arguments: Any) -> str | None:
    """The code of a code-running call (``run_python``), as ``js/src/parts/args.ts`` decides."""
    args = arguments
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    if not isinstance(args, dict) or not isinstance(args.get("code"), str):
        return None
    if re.search(r"python|exec|code", name, re.I) or len(args) == 1:
        return str(args["code"])
    return None


@dataclass
class TurnPlan:
    """One turn's entries, and what to show first and skip in its steps."""

    entries: list[Entry]
    answer: str = ""
    answer_kind: str = ""  # "final" (a Final Answer step), "text" (a step's text), "end", "refused", "stopped"
    fatal: list[Entry] = field(default_factory=list)  # non-recoverable errors, shown first
    skip: set[int] = field(default_factory=set)  # ids of entries the steps leave out
    strategy_steps: set[int] = field(default_factory=set)  # model steps with strategy rows
    end: Entry | None = None
    before: str = ""  # a "text" answer's own text before its "Final Answer:" label, shown in its step
    before_at: int | None = None  # the id of the entry it stands in for


def split_turns(entries: list[Entry]) -> list[list[Entry]]:
    """Folded entries → one list per turn (entries before any TurnStart form their own)."""
    turns: list[list[Entry]] = []
    for e in entries:
        if e["type"] == "turn_start" or not turns:
            turns.append([])
        turns[-1].append(e)
    return turns


def plan_turn(entries: list[Entry]) -> TurnPlan:
    """Where the turn's answer comes from, and which entries the steps then leave out."""
    plan = TurnPlan(entries)
    final: Entry | None = None
    texts_by_step: dict[int, list[Entry]] = {}
    for e in entries:
        etype = e["type"]
        if etype == "retry":  # the failed attempt's output is discarded
            final = None if final is not None and final.get("step") == e["step"] else final
            texts_by_step.pop(e["step"], None)
        elif etype == "strategy_step":
            plan.strategy_steps.add(e["step"])
            if (e.get("data") or {}).get("kind") == "final_answer":
                final = e
        elif etype == "text_delta":
            texts_by_step.setdefault(e["step"], []).append(e)
        elif etype == "error" and e.get("recoverable") is False:
            plan.fatal.append(e)
            plan.skip.add(id(e))
        elif etype == "turn_end":
            plan.end = e
    end = plan.end
    if end is None:  # still running: no answer yet, every step as it is
        return plan
    status = end.get("status")
    if status == "refused":
        plan.answer_kind = "refused"
        return plan
    last_text = texts_by_step[max(texts_by_step)] if texts_by_step else []
    if status == "completed" and final is not None:
        plan.answer, plan.answer_kind = str((final.get("data") or {}).get("text", "")), "final"
        plan.skip.add(id(final))
    elif status == "completed" and last_text and last_text[0]["step"] not in plan.strategy_steps:
        plan.answer = "".join(e["text"] for e in last_text).strip()
        plan.answer_kind = "text"
        plan.skip.update(id(e) for e in last_text)
        labelled = split_final_answer(plan.answer)
        if labelled is not None:
            plan.before, plan.answer = labelled
            plan.before_at = id(last_text[0])
    elif status == "completed" and end.get("text"):
        plan.answer, plan.answer_kind = str(end["text"]).strip(), "end"
    elif end.get("text") and not plan.fatal:
        # Why the turn stopped (a failed turn's error card says it already).
        plan.answer, plan.answer_kind = str(end["text"]).strip(), "stopped"
    return plan


def outputs_markdown(outputs: list[dict[str, Any]], name: str) -> list[str]:
    """A call's rich outputs as Markdown blocks: Markdown as is, text fenced, PNG/JPEG inline,
    HTML (a DataFrame's table) as a note — raw HTML from the agent's code is not copied."""
    from . import _format as fmt

    blocks = []
    for out in outputs:
        mime, data = str(out.get("mime_type", "")), str(out.get("data", ""))
        if mime == "text/markdown":
            blocks.append(data.strip())
        elif mime == "text/plain":
            blocks.append(fmt.fence(data))
        elif mime in ("image/png", "image/jpeg") and re.fullmatch(r"[A-Za-z0-9+/=\s]+", data):
            blocks.append(f"![output of {name}](data:{mime};base64,{''.join(data.split())})")
        else:
            blocks.append(f"*{output_note(out)}*")
    return blocks


def output_note(out: dict[str, Any]) -> str:
    """One line for an output a plain rendering cannot show."""
    mime = str(out.get("mime_type", ""))
    if mime == "text/html":
        return "an HTML output (a table) — shown in the widget"
    if mime.startswith("image/"):
        return f"an image ({mime}) — shown in the widget"
    return f"an output ({mime or 'unknown type'}) — shown in the widget"
