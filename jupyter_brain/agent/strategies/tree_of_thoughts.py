"""Tree-of-Thoughts: scored candidate approaches at each decision point, the best pursued."""

from __future__ import annotations

from typing import ClassVar

from . import names
from .base import TOOLS_NOTE, ReasoningStrategy
from .parser import FINAL_ANSWER
from .steps import Branch, StrategyStep


class TreeOfThoughtsStrategy(ReasoningStrategy):
    key = names.TREE_OF_THOUGHTS
    name = "Tree-of-Thoughts"
    description = "Multi-branch exploration with scoring and pruning"
    labels: ClassVar[dict[str, str]] = {
        r"candidate\s+\d+": "candidate",
        "selected": "selected",
        "reason": "reason",
        FINAL_ANSWER: "final",
    }
    decision_points: ClassVar[bool] = True

    def __init__(self, max_steps: int = 25, branching_factor: int = 3, pruning_threshold: float = 0.4) -> None:
        super().__init__(max_steps)
        self.branching_factor = branching_factor
        self.pruning_threshold = pruning_threshold

    def system_prompt(self, agent_id: str, working_directory: str) -> str:
        n, t = self.branching_factor, self.pruning_threshold
        lines = "\n".join(f"Candidate {i}: <approach> → Score: X.X" for i in range(1, n + 1))
        return f"""You are a task agent (ID: {agent_id}) using Tree-of-Thoughts reasoning.
Working Directory: {working_directory}

# TREE OF THOUGHTS FRAMEWORK
At each decision point, propose {n} candidate approaches, score them and pursue the best.
1. **Generate** {n} different approaches to the current sub-problem.
2. **Evaluate** each with a score from 0.0 to 1.0: likelihood of success, efficiency,
   risk of side effects, fit with the overall goal.
3. **Select** the highest-scoring approach (it must score above {t:.1f}).
4. **Execute** it with tools.
5. **Backtrack** to the next-best candidate if it fails.

## Format
=== Decision Point ===
{lines}
Selected: Candidate N (score: X.X)
Reason: <why this approach>
Final Answer: <the answer, with which branches were explored and why this one won>

## Rules
- Exactly {n} candidates at each major decision; score honestly.
- If every candidate scores below {t:.1f}, step back and reframe the problem.
- At most {self.max_steps} steps in total.
- {TOOLS_NOTE}"""

    def pruned(self, steps: list[StrategyStep]) -> list[Branch]:
        """Candidates below the pruning threshold (shown as pruned in tree views)."""
        return [s for s in steps if isinstance(s, Branch) and not s.selected and s.score < self.pruning_threshold]
