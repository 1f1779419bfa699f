"""The ``runtime`` and ``skill`` layers (``run_turn(runtime_provider=, runtime_model=,
runtime_environment=, skill_context=)``): short system messages rendered fresh, never stored in the history.
Their text is ``agent/runtime_context.py``'s."""

from __future__ import annotations

from typing import ClassVar

from ...context.layers import ContextLayer
from ...hooks import TurnContext, TurnHook
from ...runtime_context import runtime_text, skill_text


class RuntimeIntegration:
    """Active in the turns that name a provider, a model or a skill."""

    name: ClassVar[str] = "runtime"
    turn_options: ClassVar[tuple[str, ...]] = ("runtime_provider", "runtime_model", "skill_context")  # off: for_turn is not called

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        options = ctx.options
        if not (options.runtime_provider or options.runtime_model or options.skill_context):
            return None
        return RuntimeHook()


class RuntimeHook(TurnHook):
    name = "runtime"

    def context_layers(self, ctx: TurnContext) -> list[ContextLayer]:
        """The runtime layer (a provider or model given), then the skill layer (a skill given)."""
        layers: list[ContextLayer] = []
        runtime = runtime_text(ctx.options.runtime_provider, ctx.options.runtime_model,
                               environment=ctx.options.runtime_environment)
        if runtime:
            layers.append(ContextLayer.fixed("runtime", runtime))
        skill = skill_text(ctx.options.skill_context)
        if skill:
            layers.append(ContextLayer.fixed("skill", skill))
        return layers
