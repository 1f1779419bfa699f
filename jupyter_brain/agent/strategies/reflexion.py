"""Reflexion: Plan → Act → Observe → Reflect cycles, revising the plan after each critique."""

from __future__ import annotations

from typing import ClassVar

from . import names
from .base import TOOLS_NOTE, ReasoningStrategy
from .parser import FINAL_ANSWER
from .steps import Reflection, StrategyStep


class ReflexionStrategy(ReasoningStrategy):
    key = names.REFLEXION
    name = "Reflexion"
    description = "Self-critique after each action cycle with iterative plan refinement"
    labels: ClassVar[dict[str, str]] = {
        "plan": "plan",
        "act": "action",
        "observe": "observation",
        "reflect": "reflect",
        "revised plan": "revised_plan",  # continues the Reflection before it
        FINAL_ANSWER: "final",
    }
    # The long forms, which models often write instead.
    extra_labels: ClassVar[dict[str, str]] = {
        "action": "action",
        "observation": "observation",
        "reflection": "reflect",
    }

    def __init__(self, max_steps: int = 20, max_reflections: int = 5) -> None:
        super().__init__(max_steps)
        self.max_reflections = max_reflections

    def system_prompt(self, agent_id: str, working_directory: str) -> str:
        return f"""You are a task agent (ID: {agent_id}) using the Reflexion reasoning framework.
Working Directory: {working_directory}

# REFLEXION FRAMEWORK
Each cycle has four phases:
1. **Plan**: state the current plan and the next action you intend.
2. **Act**: carry out that action with a tool.
3. **Observe**: describe what happened.
4. **Reflect**: give an honest self-critique — what worked, what did not, are you
   making progress, should the plan change?
Then revise the plan and go again.

## Format
Plan: <current plan and next action>
Act: <tool name>
Observe: <what happened>
Reflect: <self-critique>
Revised plan: <the updated plan, if it changed>
Final Answer: <the answer, once your reflection confirms the task is complete>

## Rules
- Every action is followed by a reflection.
- Name mistakes early; after the same mistake twice, try a different approach.
- At most {self.max_reflections} reflection cycles, then finalize.
- At most {self.max_steps} steps in total.
- {TOOLS_NOTE}"""

    def is_complete(self, steps: list[StrategyStep]) -> bool:
        reflections = sum(isinstance(s, Reflection) for s in steps)
        return reflections >= self.max_reflections or super().is_complete(steps)

    def limit_reached(self, steps: list[StrategyStep], model_calls: int) -> bool:
        reflections = sum(isinstance(s, Reflection) for s in steps)
        return reflections >= self.max_reflections or super().limit_reached(steps, model_calls)
