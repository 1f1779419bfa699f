"""Budget caps at every model call of a turn: the most the call could cost (its counted
input, its output allowance, the model's price) is checked *before* it is made, against
the turn's cost and token caps, the session's cost cap (earlier turns from the event log)
and a cap shared with other turns (``%%compare``). A call that could cross one is not
made: the hook raises ``StopTurn("budget", …)`` and the turn ends with that status and a
message naming what was spent, the cap and how to go on. Side calls (compaction summary,
reflection, thinking phase) reach ``before_model_call`` too, so they count the same way.
At ``warn_at`` (80 %) of a cap one ``BudgetWarning`` event shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ....foundation.tokens import TokenCounter
from ...cost_caps import BudgetCaps, CallEstimate, estimate_call, session_spending
from ...cost_caps.wording import stop_message, unpriced_message, warning_message
from ...events import BudgetWarning, EventLog
from ...hooks import Answer, ModelRequest, Spent, StopTurn, TurnContext, TurnHook


@dataclass(frozen=True)
class BudgetIntegration:
    """Active in the turns run with ``budget=BudgetCaps(...)``; ``counter`` counts a call's
    input, ``event_log`` holds what the session's earlier turns spent."""

    name: ClassVar[str] = "budget"
    turn_options: ClassVar[tuple[str, ...]] = ("budget",)  # no caps: for_turn is not called
    counter: TokenCounter
    event_log: EventLog | None

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        caps = ctx.options.budget
        if caps is None or not caps.active:
            return None
        earlier = 0.0
        if caps.max_session_cost is not None and self.event_log is not None:
            earlier = session_spending(self.event_log, ctx.session_id).cost_usd
        return BudgetHook(caps, self.counter, earlier)


class BudgetHook(TurnHook):
    """One turn's checks; ``earlier``: what the session's earlier turns spent (USD)."""

    name = "budget"

    def __init__(self, caps: BudgetCaps, counter: TokenCounter, earlier: float = 0.0) -> None:
        self.caps = caps
        self.counter = counter
        self.earlier = earlier
        self.warned: set[str] = set()

    def before_model_call(self, ctx: TurnContext, request: ModelRequest) -> ModelRequest:
        provider = request.provider if request.provider is not None else ctx.provider
        call = estimate_call(request.messages, request.tool_schemas, provider, self.counter,
                             thinking_budget=request.thinking_budget)
        spent = ctx.spent()
        self._warn(ctx, spent, request.step)
        problem = self._crossing(ctx, spent, call, request.purpose)
        if problem is not None:
            raise StopTurn("budget", problem)
        return request

    def finish_answer(self, ctx: TurnContext, answer: Answer) -> Answer:
        spent = ctx.spent()
        self._warn(ctx, spent, answer.step)
        if self.caps.shared is not None:
            self.caps.shared.settle(ctx.turn_id, spent.cost_usd or 0.0)
        return answer

    # the checks -------------------------------------------------------------------------
    def _crossing(self, ctx: TurnContext, spent: Spent, call: CallEstimate, purpose: str) -> str | None:
        """Why the call may not be made (the turn's stop message), or None."""
        caps = self.caps
        if caps.max_tokens_total is not None and spent.tokens + call.tokens > caps.max_tokens_total:
            return stop_message("tokens", spent.tokens, caps.max_tokens_total, "tokens", call, purpose)
        if caps.max_cost is None and caps.max_session_cost is None and caps.shared is None:
            return None
        if call.cost_usd is None or spent.cost_usd is None:
            return unpriced_message(call.model)
        most = call.cost_usd
        if caps.max_cost is not None and spent.cost_usd + most > caps.max_cost:
            return stop_message("turn", spent.cost_usd, caps.max_cost, "usd", call, purpose)
        session = self.earlier + spent.cost_usd
        if caps.max_session_cost is not None and session + most > caps.max_session_cost:
            return stop_message("session", session, caps.max_session_cost, "usd", call, purpose)
        if caps.shared is not None:
            committed = caps.shared.reserve(ctx.turn_id, spent.cost_usd, most)
            if committed is not None:
                return stop_message("comparison", committed, caps.shared.max_cost, "usd", call, purpose)
        return None

    def _warn(self, ctx: TurnContext, spent: Spent, step: int) -> None:
        """One ``BudgetWarning`` per cap, once ``warn_at`` of it is used."""
        caps = self.caps
        levels: list[tuple[str, str, float, Any]] = [("tokens", "tokens", spent.tokens, caps.max_tokens_total)]
        if spent.cost_usd is not None:
            levels += [("turn", "usd", spent.cost_usd, caps.max_cost),
                       ("session", "usd", self.earlier + spent.cost_usd, caps.max_session_cost)]
            if caps.shared is not None:
                levels.append(("comparison", "usd", caps.shared.spent(), caps.shared.max_cost))
        for scope, unit, used, cap in levels:
            if cap is None or scope in self.warned or used < caps.warn_at * cap:
                continue
            self.warned.add(scope)
            ctx.emit(BudgetWarning(step=step, scope=scope, unit=unit, spent=used, cap=cap,
                                   message=warning_message(scope, used, cap, unit)))
