"""ThinkingProcessor: the thinking phase between tool cycles (thinking-cycle proposal).

It looks at the history, the fresh workspace and the last tool results, and returns a
compact state of the task (``ThinkingResult``) plus a compressed history: tool results the
model has already seen are cleared (their statements kept as insights), the previous
``[Thinking]`` message gives way to the new one, and the compaction strategy of the same
name (``agent/context/compactors.py``, one implementation each) brings the rest down to
``history_budget`` tokens. The history keeps the rules of ``agent/history.py``: tool calls
and results together, a user message first, assistant messages (and their signed thinking
blocks) kept as the same objects or dropped whole.

``summary`` and ``semantic`` let a model write the summary and state (``provider``: the
harness passes ``thinking_provider``, or its own); ``token_budget`` needs none, and a
failed model call falls back to the extractive state.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from ...foundation.tokens import TokenCounter, text_of
from ...providers.base import Usage
from ..context.compaction import CLEARED_PREFIX, SUMMARY_HEADER, CompactionStrategy, _cleared, _render_args
from ..context.compactors import TokenBudget, compaction_strategy
from ..context.summary import _transcript
from ..history import Message, history_problems, units
from . import state as st

log = logging.getLogger(__name__)

THINKING_INSTRUCTION = (
    "You are the thinking phase of a tool-using agent. Between tool cycles you keep a compact "
    "state of the task so the bulk tool output can leave the context. Given the goal, the "
    "previous state and the latest steps, answer in exactly this form:\n"
    "Summary: what has been done so far (cumulative; include the previous summary's facts)\n"
    "State: where the task stands now\n"
    "Insights:\n- one fact found in tool output per line, with names and values exact\n"
    "Next: the next action\n"
    "Be brief. Do not invent."
)


@dataclass
class ThinkingResult:
    """The proposal's ``ThinkingResult``, plus what the phase cost and saved."""

    summary: str
    current_state: str
    compressed_history: list[Message]
    insights: list[str]
    next_actions: str
    thinking_tokens: int = 0  # tokens of the thinking model call(s), input + output
    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0
    strategy: str = ""
    tokens_before: int = 0  # of the history
    tokens_after: int = 0
    fallback: str | None = None  # why part of the phase fell back (the history is still compressed)

    @property
    def tokens_saved(self) -> int:
        return max(0, self.tokens_before - self.tokens_after)

    @property
    def message(self) -> Message:
        """The ``[Thinking]`` message (the last of ``compressed_history``)."""
        return self.compressed_history[-1]


class ThinkingProcessor:
    """Runs the thinking phase with one strategy: ``summary`` (sliding window with a
    summary), ``semantic`` or ``token_budget``; see the module docstring."""

    def __init__(self, strategy: CompactionStrategy | str = "summary", *, provider: Any = None,
                 counter: TokenCounter | None = None, history_budget: int = 1_200, max_insights: int = 40,
                 timeout_s: float = 30.0, result_chars: int = 800, rewrite_after_tokens: int = 400) -> None:
        self.strategy = compaction_strategy(strategy) if isinstance(strategy, str) else strategy
        self.provider = provider
        self.counter = counter or TokenCounter()
        self.history_budget = int(history_budget)
        self.max_insights = int(max_insights)
        self.timeout_s = timeout_s
        self.result_chars = result_chars
        # The model rewrites the state once this much new tool output has arrived since it
        # last wrote it (the proposal's adaptive threshold); in between, the phase carries its
        # state forward extractively, at no model cost.
        self.rewrite_after_tokens = int(rewrite_after_tokens)
        self._unwritten_tokens = 0
        self._written = False

    def __repr__(self) -> str:
        return f"ThinkingProcessor(strategy={self.strategy!r}, history_budget={self.history_budget})"

    @property
    def uses_model(self) -> bool:
        return self.provider is not None and not isinstance(self.strategy, TokenBudget)

    def perform_thinking(self, history: list[Message], workspace_context: str = "",
                         last_tool_results: list[Message] | None = None, *, goal: str = "",
                         protect_from: int | None = None, timeout_s: float | None = None) -> ThinkingResult:
        """The state of the task and the history to send. ``history`` has no system
        messages; ``history[protect_from]`` is the current user message (default: the
        last user message that is not a summary), kept untouched with the last unit.
        Raises only for a bug; the caller falls back to the uncompressed request."""
        history = list(history)
        if protect_from is None:
            protect_from = next((i for i in range(len(history) - 1, -1, -1)
                                 if history[i].get("role") == "user" and history[i].get("kind") != "summary"), 0)
        if last_tool_results is None:
            last_tool_results = _trailing_results(history)
        if not goal and protect_from < len(history):
            goal = text_of(history[protect_from].get("content"))
        count = self.counter.count_messages
        tokens_before = count(history)

        previous = next((m for m in reversed(history) if st.is_thinking_message(m)), None)
        prev = st.parse(text_of(previous.get("content"))) if previous is not None else st.parse("")
        messages, protect = _without_thinking(history, protect_from)
        calls = st.call_index(messages)
        last_unit = units(messages)[-1] if messages else None
        leaving = [m for i, m in enumerate(messages) if m.get("role") == "tool"
                   and (last_unit is None or i < last_unit.start)]
        new = st.result_insights([*leaving, *last_tool_results], calls, goal)
        insights = st.merge_insights(prev["insights"], new, self.max_insights)
        messages = _clear_seen_results(messages, calls, last_unit.start if last_unit else 0, self.counter)

        summary = f"Goal: {_clip(goal, 200)} — {st.action_digest(messages)}."
        current = _extractive_state(messages, last_tool_results, calls)
        next_actions = st.last_assistant_text(messages) or "continue toward the goal"
        usage, calls_made, fallback = Usage(), 0, None
        self._unwritten_tokens += count(last_tool_results)
        due = not self._written or self._unwritten_tokens >= self.rewrite_after_tokens
        if self.uses_model and not due:
            summary = prev["summary"] or summary  # the model's last summary stands until the next rewrite
            next_actions = prev["next"] or next_actions
        if self.uses_model and due:
            try:
                written, usage = self._ask_model(goal, prev, messages, last_tool_results, workspace_context,
                                                 timeout_s or self.timeout_s)
                calls_made = 1
                self._written, self._unwritten_tokens = True, 0
                summary = written["summary"] or summary
                current = written["state"] or current
                next_actions = written["next"] or next_actions
                insights = st.merge_insights(insights, written["insights"], self.max_insights)
            except Exception as exc:  # noqa: BLE001 - a failed thinking call keeps the extractive state
                fallback = f"thinking model failed ({type(exc).__name__}: {_clip(str(exc), 120)}); extractive state"
                log.warning("thinking phase: %s", fallback)

        written_summary = summary
        result = self.strategy.compact(
            messages, budget_tokens=self.history_budget, counter=self.counter, protect_from=protect, goal=goal,
            summarize=(lambda old: written_summary) if calls_made else None,
        )
        compressed = result.messages
        if result.fallback and not fallback and self.uses_model:
            fallback = result.fallback
        has_summary = any(str(m.get("content") or "").startswith(SUMMARY_HEADER) for m in compressed)
        text = st.render("" if has_summary else summary, current, insights, next_actions)
        compressed = [*compressed, {"role": "user", "content": text, "kind": "summary"}]
        problems = history_problems(compressed)
        if problems:
            raise ValueError(f"the thinking phase produced an invalid history: {problems[0]}")
        return ThinkingResult(
            summary=summary, current_state=current, compressed_history=compressed, insights=insights,
            next_actions=next_actions, thinking_tokens=usage.total_input_tokens + usage.output_tokens,
            usage=usage, model_calls=calls_made, strategy=self.strategy.name, tokens_before=tokens_before,
            tokens_after=count(compressed), fallback=fallback,
        )

    def _ask_model(self, goal: str, prev: dict[str, Any], messages: list[Message], results: list[Message],
                   workspace: str, timeout_s: float) -> tuple[dict[str, Any], Usage]:
        previous = st.render(prev["summary"], prev["state"], prev["insights"], prev["next"])
        last_unit = units(messages)[-1] if messages else None
        recent = messages[last_unit.start:] if last_unit else []
        recent_ids = {m.get("tool_call_id") for m in recent}
        extra = [m for m in results if m.get("tool_call_id") not in recent_ids]
        prompt = (
            f"Goal: {goal}\n\nPrevious state:\n{previous}\n\n"
            f"Latest steps:\n{_transcript([*recent, *extra], clip=self.result_chars)}\n\n"
            f"Workspace (excerpt):\n{_clip(workspace, 400)}\n\nWrite the new state."
        )
        request = [
            # "summary_request": the kind providers and the scripted stand-in treat as a side call
            {"role": "system", "content": THINKING_INSTRUCTION, "kind": "summary_request"},
            {"role": "user", "content": prompt},
        ]
        answer = self.provider.generate(request, [], timeout_s=timeout_s)
        if not answer.text.strip():
            raise ValueError("the thinking model returned no text")
        return st.parse(answer.text), answer.usage


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _trailing_results(history: list[Message]) -> list[Message]:
    out: list[Message] = []
    for m in reversed(history):
        if m.get("role") != "tool":
            break
        out.append(m)
    return out[::-1]


def _without_thinking(history: list[Message], protect: int) -> tuple[list[Message], int]:
    """The history without earlier ``[Thinking]`` messages (the new one replaces them)."""
    out: list[Message] = []
    new_protect = protect
    for i, m in enumerate(history):
        if st.is_thinking_message(m):
            if i < protect:
                new_protect -= 1
            continue
        out.append(m)
    return out, max(0, min(new_protect, len(out)))


def _clear_seen_results(messages: list[Message], calls: dict[Any, tuple[str, Any]], upto: int,
                        counter: TokenCounter) -> list[Message]:
    """Tool results before ``upto`` (the model has seen them) become one-line markers."""
    out = list(messages)
    for i in range(min(upto, len(out))):
        m = out[i]
        if m.get("role") != "tool" or text_of(m.get("content")).startswith(CLEARED_PREFIX):
            continue
        tokens = counter.count_text(text_of(m.get("content")))
        marker = _cleared(m, calls.get(m.get("tool_call_id")), tokens)
        if counter.count_message(marker) < counter.count_message(m):
            out[i] = marker
    return out


def _extractive_state(messages: list[Message], results: list[Message], calls: dict[Any, tuple[str, Any]]) -> str:
    if not results:
        return st.action_digest(messages)
    parts = []
    for m in results:
        name, args = calls.get(m.get("tool_call_id"), (m.get("name") or "tool", None))
        outcome = "failed" if m.get("is_error") else "returned"
        parts.append(f"{name}({_render_args(args, 60)}) {outcome} {len(text_of(m.get('content'))):,} characters")
    return "last step: " + "; ".join(parts)
