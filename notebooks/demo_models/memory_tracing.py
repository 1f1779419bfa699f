"""memory_and_tracing.ipynb: a model that answers from the context it is given — the
memories recalled for a request, the workspace passages of its context pack — and writes
the facts worth remembering when asked (auto memory), so each cell shows what reached it."""

from __future__ import annotations

import re
from typing import Any

from jupyter_brain import ChainProvider, ScriptedProvider

from ._base import live, pick


def _context(messages: list[dict[str, Any]], kind: str) -> str:
    return "\n".join(str(m["content"]) for m in messages if m.get("role") == "system" and m.get("kind") == kind)


def _remembering(messages: list[dict[str, Any]]) -> str:
    """The extraction request of auto memory: durable facts of the exchange, or NONE."""
    exchange = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    facts = []
    if "US dollars" in exchange:
        facts.append("- revenue in the sales table is in US dollars")
    if "fiscal year starts in April" in exchange:
        facts.append("- the fiscal year starts in April")
    return "\n".join(facts) or "NONE"


def _answer(messages: list[dict[str, Any]], tools: Any) -> str:
    if any(m.get("kind") == "memory_extraction" for m in messages):
        return _remembering(messages)
    question = str(messages[-1].get("content", ""))
    memories = _context(messages, "memory")
    pack = _context(messages, "context_pack")
    if "currency" in question.lower():
        if "US dollars" in memories:
            return "Revenue is in **US dollars** — you told me so in an earlier session (a recalled memory)."
        return "I don't know which currency the revenue is in; nothing in this conversation says."
    if "churn" in question.lower() and pack:
        found = re.search(r"\[(metrics\.md:\d+)\][^\n]*\n(?:.*\n)*?.*no paid order for 90 days", pack)
        where = found.group(1) if found else "metrics.md"
        return (f"A customer has **churned** after 90 days without a paid order ({where}); the monthly "
                "churn rate divides that month's churned customers by the customers at its start.")
    if "US dollars" in question:
        return "Noted: revenue is in US dollars."
    return "Done."


def memory_model() -> Any:
    """Answers from recalled memories and context packs; writes memories when asked."""
    return pick(lambda: ScriptedProvider([_answer], repeat=True, model="demo-memory"))


def flaky_chain() -> Any:
    """A chain whose primary is overloaded: every step falls back to the second member."""
    if live():
        return "auto"
    overloaded = ScriptedProvider([{"error": {"kind": "overloaded", "status_code": 529,
                                              "message": "Overloaded (scripted)"}}], repeat=True,
                                  model="primary-model")
    backup = ScriptedProvider(["The backup model answered: the primary was overloaded, so the step moved on."],
                              repeat=True, model="backup-model")
    return ChainProvider([overloaded, backup])
