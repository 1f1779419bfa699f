"""TurnOptions: the reference design's per-turn parameters of ``run_turn``.

They shape one turn's request without touching the harness: how many workspace passages
go into its context pack (``top_k``), web search, citations, the runtime metadata message,
a skill's extra system message and its budget caps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .cost_caps.caps import BudgetCaps

WebMode = Literal["off", "on"]
WEB_MODES: tuple[str, ...] = ("off", "on")


@dataclass(frozen=True)
class TurnOptions:
    top_k: int = 0  # workspace passages in the context pack; 0: no pack
    web_mode: WebMode = "off"
    show_citations: bool = False  # the answer ends with its sources
    runtime_provider: str = ""  # with runtime_model: a short runtime metadata system message
    runtime_model: str = ""
    runtime_environment: bool = True  # the runtime message also names today's date and the kernel's Python
    skill_context: str | None = None  # an extra system message (a skill's text)
    budget: BudgetCaps | None = None  # cost and token caps (agent/cost_caps): None, no cap

    def __post_init__(self) -> None:
        if int(self.top_k) < 0:
            raise ValueError("top_k must be 0 or more (the number of workspace passages)")
        if self.web_mode not in WEB_MODES:
            raise ValueError(f"web_mode must be one of {', '.join(WEB_MODES)}, not {self.web_mode!r}")
        object.__setattr__(self, "top_k", int(self.top_k))
        object.__setattr__(self, "show_citations", bool(self.show_citations))
        object.__setattr__(self, "runtime_environment", bool(self.runtime_environment))
