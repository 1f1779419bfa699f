"""``--judge``: a model reads the question, the answer and a rubric, and gives its opinion.

A judge is a model's opinion, not a rule: its verdicts carry ``opinion=True`` and every
view labels them so. Its call is billed like any other: its tokens and cost are on the
verdict (the comparison adds them to its totals), and a shared budget cap (``--max-cost``)
bounds it: the call is made only when its most fits under the cap, else the run is "not
judged" (a failure that says why).

The judge answers with a first line ``PASS`` or ``FAIL``, then one line of reason.

With a ``memory`` (``judge_memory.py``) a verdict the judge gave before on the same
question, answer and rubric is reused, labelled as recorded, at no cost and with no call.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..agent.cost_caps import SharedBudget
from ..agent.cost_caps.estimate import estimate_call
from ..foundation.catalog import price_for
from ..foundation.tokens import TokenCounter
from ..providers.base import LLMProvider
from .checks import CheckResult, one_line
from .judge_memory import RECORDED_NOTE, VerdictMemory, verdict_key

DEFAULT_RUBRIC = "The answer is correct and answers the question that was asked."
JUDGE_PROMPT = """You grade an AI assistant's answer to a question, strictly, against a rubric.
Reply with PASS or FAIL on the first line, then one short sentence saying why."""
JUDGE_KIND = "judge"  # the system message's kind: scripted providers and logs can tell the call apart
_counter_lock = threading.Lock()
_counter: TokenCounter | None = None


def _token_counter() -> TokenCounter:
    global _counter
    with _counter_lock:
        if _counter is None:
            _counter = TokenCounter()
        return _counter


def judge_messages(question: str, answer: str, rubric: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": JUDGE_PROMPT, "kind": JUDGE_KIND},
        {"role": "user", "content": f"<question>\n{question}\n</question>\n\n<answer>\n{answer}\n</answer>\n\n"
                                    f"<rubric>\n{rubric}\n</rubric>"},
    ]


def parse_verdict(text: str) -> tuple[bool | None, str]:
    """``(passed, reason)`` from the judge's reply; passed is None when it said neither."""
    lines = [line.strip() for line in (text or "").strip().splitlines() if line.strip()]
    if not lines:
        return None, "the judge gave no verdict"
    first = lines[0].lstrip("*#- ")
    upper = first.upper().removeprefix("VERDICT:").strip()
    for word, passed in (("PASS", True), ("FAIL", False)):
        if upper.startswith(word):
            reason = " ".join([first[len(first) - len(upper) + len(word):].strip(" *:-—.,"), *lines[1:]]).strip()
            return passed, one_line(reason or ("passed" if passed else "failed"))
    return None, one_line(f"the judge's reply is neither PASS nor FAIL: {lines[0]}")


@dataclass
class JudgeCheck:
    """A check that asks ``provider`` (``question``: the prompt the runs answered).
    ``budget``: the comparison's shared cap; ``timeout_s`` bounds the call; ``memory``:
    verdicts given before (``judge``: the judge's name in their keys)."""

    provider: LLMProvider
    question: str
    rubric: str = ""
    budget: SharedBudget | None = None
    timeout_s: float = 120.0
    kind: str = "judge"
    memory: VerdictMemory | None = None
    judge: str = ""
    _calls: int = field(default=0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def label(self) -> str:
        return f"judge: {self.rubric}" if self.rubric else "judge"

    def evaluate(self, answer: str, namespace: Mapping[str, Any] | None = None) -> CheckResult:
        if not (answer or "").strip():
            return self._verdict(False, "not judged: the run gave no answer")
        key = verdict_key(self.question, answer, self.rubric or DEFAULT_RUBRIC,
                          self.judge or str(getattr(self.provider, "name", "")))
        recorded = recorded_verdict(self.memory, key, self.label)
        if recorded is not None:
            return recorded
        if self.memory is not None and getattr(self.memory, "strict", False):
            return self._verdict(False, "not judged: --replay strict, and no verdict on this answer was recorded")
        messages = judge_messages(self.question, answer, self.rubric or DEFAULT_RUBRIC)
        with self._lock:
            self._calls += 1
            ticket = f"judge-{id(self)}-{self._calls}"
        if self.budget is not None:
            most = estimate_call(messages, [], self.provider, _token_counter()).cost_usd or 0.0
            committed = self.budget.reserve(ticket, 0.0, most)
            if committed is not None:
                return self._verdict(False, f"not judged: the call (up to ${most:.4f}) would cross the "
                                            f"{self.budget.label}'s ${self.budget.max_cost:g} cap")
        try:
            result = self.provider.generate(messages, [], timeout_s=self.timeout_s)
        except Exception as exc:  # noqa: BLE001 - a failing judge is a verdict, not a crash
            if self.budget is not None:
                self.budget.settle(ticket, 0.0)
            return self._verdict(False, one_line(f"not judged: {type(exc).__name__}: {exc}"))
        price = price_for(getattr(self.provider, "model", None) or result.model, getattr(self.provider, "name", None))
        cost = None if price is None else price.cost(result.usage)
        if self.budget is not None:
            self.budget.settle(ticket, cost or 0.0)
        passed, reason = parse_verdict(result.text)
        if self.memory is not None and passed is not None:  # a real verdict (not "neither PASS nor FAIL")
            self.memory.keep(key, {"passed": bool(passed), "reason": reason, "label": self.label,
                                   "input_tokens": result.usage.input_tokens,
                                   "output_tokens": result.usage.output_tokens, "cost_usd": cost})
        return self._verdict(bool(passed), reason, result.usage.input_tokens, result.usage.output_tokens, cost)

    def _verdict(self, passed: bool, reason: str, input_tokens: int = 0, output_tokens: int = 0,
                 cost: float | None = 0.0) -> CheckResult:
        return CheckResult(kind=self.kind, label=self.label, passed=passed, reason=reason, opinion=True,
                           input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost)


def recorded_verdict(memory: VerdictMemory | None, key: str, label: str, kind: str = "judge") -> CheckResult | None:
    """The verdict ``memory`` holds for ``key``, as a free, labelled ``CheckResult``; None when none."""
    found = memory.recall(key) if memory is not None else None
    if found is None:
        return None
    reason = one_line(f"{found.get('reason') or ('passed' if found.get('passed') else 'failed')} ({RECORDED_NOTE})")
    return CheckResult(kind=kind, label=label, passed=bool(found.get("passed")), reason=reason, opinion=True,
                       recorded=True)
