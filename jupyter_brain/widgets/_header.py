"""What a view's header and footer show, folded from events (and only from events)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..providers.chain import split_provider_label

Entry = dict[str, Any]


@dataclass
class Header:
    """Latest turn's facts: model, levels, step counter, status and usage."""

    session_id: str = ""
    turn: int = 0  # the turn's number in its session (TurnStart.turn_number), else turns seen by this view
    status: str = "idle"
    step: int = 0  # current (latest started) step
    steps: int = 0  # finished steps
    max_steps: int = 0
    provider: str = ""
    model: str = ""
    think_level: str = ""
    strategy: str = ""
    tool_calls: int = 0
    reflections: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float | None = None
    duration_ms: float = 0.0
    usage_estimated: bool = False  # some usage was counted locally, not reported
    retries: int = 0
    recorded: dict[str, Any] | None = None  # a replayed turn: what its replayed calls cost when recorded

    def update(self, e: Entry) -> None:
        etype = e["type"]
        if etype == "turn_start":
            fresh = Header(turn=e.get("turn_number") or self.turn + 1, status="running")
            fresh.session_id = e.get("session_id", "")
            fresh.provider, fresh.model = e.get("provider", ""), e.get("model", "")
            fresh.think_level = e.get("think_level", "")
            fresh.strategy = e.get("strategy") or ""
            fresh.max_steps = e.get("max_steps", 0)
            self.__dict__.update(fresh.__dict__)
        elif etype == "step_start":
            self.step = e["step"]
        elif etype == "provider_fallback":
            # A chain moved on: name the member that answers from now on.
            self.provider, self.model = split_provider_label(str(e.get("next", "")))
        elif etype == "step_end":
            self.steps += 1
        elif etype == "tool_call_end":
            self.tool_calls += 1
        elif etype == "reflection":
            self.reflections += 1
        elif etype == "usage":
            self.input_tokens += e.get("input_tokens", 0)
            self.output_tokens += e.get("output_tokens", 0)
            self.cache_read_tokens += e.get("cache_read_tokens", 0)
            self.cache_creation_tokens += e.get("cache_creation_tokens", 0)
            if e.get("cost_usd") is not None:
                self.cost_usd = (self.cost_usd or 0.0) + e["cost_usd"]
            self.usage_estimated = self.usage_estimated or bool(e.get("usage_estimated"))
        elif etype == "retry":
            self.retries += 1
        elif etype == "turn_end":
            # The turn's own totals are authoritative (they include reflection calls).
            self.status = e["status"]
            self.steps = e.get("steps") or self.steps
            self.tool_calls = e.get("tool_calls") or self.tool_calls
            self.reflections = e.get("reflections") or self.reflections
            for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens"):
                self.__dict__[key] = e.get(key) or self.__dict__[key]
            if e.get("cost_usd") is not None:
                self.cost_usd = e["cost_usd"]
            self.duration_ms = e.get("duration_ms", 0.0)
            self.usage_estimated = self.usage_estimated or bool(e.get("usage_estimated"))
            self.recorded = e.get("recorded") or None
            if not self.session_id:
                self.session_id = e.get("session_id", "")

    @property
    def replayed(self) -> bool:
        """Every model call of the turn was answered from its recording: it spent nothing now,
        so its figures are the recorded ones (``RECORDED_MARK`` says so)."""
        spent = self.input_tokens or self.output_tokens or self.cache_read_tokens or self.cache_creation_tokens
        return self.recorded is not None and not spent and not self.cost_usd

    @property
    def model_label(self) -> str:
        return "/".join(p for p in (self.provider, self.model) if p)
