"""ReAct: Thought → Action → Observation cycles until a final answer."""

from __future__ import annotations

from typing import ClassVar

from . import names
from .base import TOOLS_NOTE, ReasoningStrategy
from .parser import FINAL_ANSWER


class ReActStrategy(ReasoningStrategy):
    key = names.REACT
    name = "ReAct"
    description = "Reasoning + Acting: alternate between Thought, Action, and Observation steps"
    labels: ClassVar[dict[str, str]] = {
        "thought": "thought",
        "action": "action",
        "observation": "observation",
        FINAL_ANSWER: "final",
    }
    # The classic ReAct "Action Input:" line continues the Action before it.
    extra_labels: ClassVar[dict[str, str]] = {"action input": "action_input"}

    def system_prompt(self, agent_id: str, working_directory: str) -> str:
        return f"""You are a task agent (ID: {agent_id}) using the ReAct reasoning framework.
Working Directory: {working_directory}

# ReAct FRAMEWORK
Work in a strict loop:
1. **Thought**: reason about what to do next — what you know, what you still need,
   and which single action gets you closer.
2. **Action**: make exactly ONE tool call that follows from the thought.
3. **Observation**: once the result arrives, analyse it — did it work, what did you
   learn, does it change the plan?
Repeat Thought → Action → Observation until the task is done.

## Format
Thought: <your reasoning>
Action: <tool name>
Observation: <your analysis of the result>
Final Answer: <the answer, once the task is complete>

## Rules
- One action (tool call) per cycle; never act without a Thought first.
- When a tool call fails, say so in the next Thought and adjust.
- At most {self.max_steps} reasoning cycles.
- {TOOLS_NOTE}

## Completion
When the task is complete, write "Final Answer:" followed by your answer, and stop."""
