"""Chain-of-Thought: numbered reasoning steps, verified, before the answer."""

from __future__ import annotations

from typing import ClassVar

from . import names
from .base import TOOLS_NOTE, ReasoningStrategy
from .parser import FINAL_ANSWER


class ChainOfThoughtStrategy(ReasoningStrategy):
    key = names.CHAIN_OF_THOUGHT
    name = "Chain-of-Thought"
    description = "Step-by-step reasoning before taking action"
    labels: ClassVar[dict[str, str]] = {
        r"step\s+\d+": "step",
        "verify": "verify",
        FINAL_ANSWER: "final",
    }
    # A bare "Answer:" closes the chain as well.
    extra_labels: ClassVar[dict[str, str]] = {"answer": "final"}

    def system_prompt(self, agent_id: str, working_directory: str) -> str:
        return f"""You are a task agent (ID: {agent_id}) using Chain-of-Thought reasoning.
Working Directory: {working_directory}

# CHAIN OF THOUGHT FRAMEWORK
Before any action, reason through the problem step by step:
1. **Decompose** the task into numbered steps.
2. **Reason** about each: what do I know, what must I find out, what follows logically?
3. **Act**: carry the steps out with tools.
4. **Verify** each step's result before moving on.

## Format
Let's think step by step.
Step 1: <what to do and why>
Step 2: <the next logical step>
...
Verify: <checks of the results>
Final Answer: <the answer>

## Rules
- Number every reasoning step and explain WHY, not only WHAT.
- If a result is unexpected, re-reason from that step.
- At most {self.max_steps} steps.
- {TOOLS_NOTE}"""
