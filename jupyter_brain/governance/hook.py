"""The policy at every model call of a turn: the answering provider and model checked,
the call's most reserved in the shared ledger against the user's and their teams'
daily caps, and settled with the real use at the next call and when the turn ends.

A ledger that cannot be reached refuses the call (``StopTurn``): a policy with caps is
never run unpoliced. ``for_turn`` does nothing that can fail (a failing integration is
left out of the turn, which would run it unchecked).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from ..agent.cost_caps import estimate_call
from ..agent.cost_caps.estimate import answering
from ..agent.hooks import ModelRequest, StopTurn, TurnContext, TurnHook
from ..agent.results import TurnResult
from ..foundation.tokens import TokenCounter
from .ledger import CapReached, Ledger, Scope
from .ledger_sql import LedgerUnavailable
from .rules import PolicyRefusal, Rules, provider_identity
from .wording import cap_message, ledger_down_message, unpriced_message

FREE_OF_CALLS = {"replayed"}  # a recording answers: no call is made


@dataclass
class GovernanceIntegration:
    """Active in every turn of a governed kernel."""

    name: ClassVar[str] = "governance"
    rules: Rules
    user: str
    scopes: list[Scope]
    ledger: Callable[[], Ledger] | None  # opened on first use
    counter: TokenCounter

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        return GovernanceHook(self)


class GovernanceHook(TurnHook):
    name = "governance"

    def __init__(self, owner: GovernanceIntegration) -> None:
        self.owner = owner
        self.open: tuple[int, float, int] | None = None  # (reservation, turn's cost, tokens when made)

    def before_model_call(self, ctx: TurnContext, request: ModelRequest) -> ModelRequest:
        owner = self.owner
        provider = request.provider if request.provider is not None else ctx.provider
        self._check_provider(answering(provider, request.messages, request.tool_schemas, request.thinking_budget))
        if owner.ledger is None or not owner.scopes:
            return request
        call = estimate_call(request.messages, request.tool_schemas, provider, owner.counter,
                             thinking_budget=request.thinking_budget)
        costs = any(s.caps.max_cost_per_day is not None for s in owner.scopes)
        if call.cost_usd is None and costs:
            raise StopTurn("budget", unpriced_message(call.model, owner.rules.source))
        spent = ctx.spent()
        try:
            ledger = owner.ledger()
            self._settle(ledger, spent.cost_usd, spent.tokens)
            outcome = ledger.reserve(owner.user, owner.scopes, call.cost_usd or 0.0, call.tokens, turn_id=ctx.turn_id)
        except LedgerUnavailable as exc:
            raise StopTurn("budget", ledger_down_message(str(exc))) from None
        if isinstance(outcome, CapReached):
            raise StopTurn("budget", cap_message(outcome, owner.user, owner.rules.source))
        self.open = (outcome, spent.cost_usd or 0.0, spent.tokens)
        return request

    def after_turn(self, ctx: TurnContext, result: TurnResult) -> None:
        if self.open is None or self.owner.ledger is None:
            return
        spent = ctx.spent()
        try:
            self._settle(self.owner.ledger(), spent.cost_usd, spent.tokens)
        except LedgerUnavailable:
            pass  # the reservation (an upper bound) stays counted

    def _settle(self, ledger: Ledger, cost: float | None, tokens: int) -> None:
        if self.open is None:
            return
        reservation, cost_then, tokens_then = self.open
        self.open = None
        ledger.settle(reservation, max(0.0, (cost or 0.0) - cost_then), max(0, tokens - tokens_then))

    def _check_provider(self, providers: list[Any]) -> None:
        rules = self.owner.rules
        for provider in providers:
            names, models = provider_identity(provider)
            if set(names) <= FREE_OF_CALLS:
                continue
            try:
                rules.check_provider(names)
                rules.check_model(models)
            except PolicyRefusal as refusal:
                raise StopTurn("refused", f"Stopped before the model call: {refusal}.") from None
