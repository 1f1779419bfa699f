"""Named reasoning strategies (ReAct, Reflexion, Chain-of-Thought, Tree-of-Thoughts).

A strategy shapes the system prompt and says when reasoning has converged. The model's
text in the strategy's format is parsed into typed ``StrategyStep``s — incrementally, so
a view can show Thought/Action/Observation chips while the answer is still streaming.
"""

from __future__ import annotations

import copy
import json
import re
from enum import Enum
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, TypeAdapter

# ── Steps ────────────────────────────────────────────────────────────────────


class StrategyStep(BaseModel):
    """One step of a reasoning trace; the subclasses are the kinds."""

    kind: str


class Thought(StrategyStep):
    kind: Literal["thought"] = "thought"
    text: str
    label: str | None = None  # e.g. "Plan", "Step 2", "Reason"

    def __str__(self) -> str:
        return f"{self.label or 'Thought'}: {self.text}"


class Action(StrategyStep):
    kind: Literal["action"] = "action"
    tool: str
    args: Any = Field(default_factory=dict)

    def __str__(self) -> str:
        return f"Action: {self.tool}"


class Observation(StrategyStep):
    kind: Literal["observation"] = "observation"
    text: str

    def __str__(self) -> str:
        return f"Observation: {self.text}"


class Reflection(StrategyStep):
    kind: Literal["reflection"] = "reflection"
    critique: str
    revised_plan: str = ""

    def __str__(self) -> str:
        return f"Reflection: {self.critique}"


class Branch(StrategyStep):
    kind: Literal["branch"] = "branch"
    branch_id: int
    thought: str
    score: float
    decision_point: int = 1
    selected: bool = False  # the "Selected: Candidate N" line of a decision point

    def __str__(self) -> str:
        mark = " selected" if self.selected else ""
        return f"Branch[{self.branch_id}] (score={self.score:.2f}){mark}: {self.thought}"


class FinalAnswer(StrategyStep):
    kind: Literal["final_answer"] = "final_answer"
    text: str

    def __str__(self) -> str:
        return f"Final: {self.text}"


AnyStep = Annotated[
    Union[Thought, Action, Observation, Reflection, Branch, FinalAnswer], Field(discriminator="kind")
]
STEP_ADAPTER: TypeAdapter[AnyStep] = TypeAdapter(AnyStep)


def step_from_dict(data: dict[str, Any]) -> StrategyStep:
    return STEP_ADAPTER.validate_python(data)


# ── Streaming parser ─────────────────────────────────────────────────────────

_FINAL = r"final\s+answer"
# Label words per strategy key; each maps to the step kind it opens.
_LABELS: dict[str, dict[str, str]] = {
    "react": {"thought": "thought", "action": "action", "action input": "action_input",
              "observation": "observation", _FINAL: "final"},
    "reflexion": {"plan": "plan", "act": "action", "action": "action", "observe": "observation",
                  "observation": "observation", "reflect": "reflect", "reflection": "reflect",
                  "revised plan": "revised_plan", _FINAL: "final"},
    "cot": {r"step\s+\d+": "step", "verify": "verify", _FINAL: "final", "answer": "final"},
    "tot": {r"candidate\s+\d+": "candidate", "selected": "selected", "reason": "reason",
            _FINAL: "final"},
}

# "Action Input" continues an Action, "Revised plan" a Reflection; after any other step
# they start a labelled thought of their own (their text is never dropped).
_CONTINUATIONS = {"action_input": "action", "revised_plan": "reflect"}
_THOUGHT_LABELS = {
    "thought": None, "plan": "Plan", "verify": "Verify", "reason": "Reason",
    "action_input": "Action Input", "revised_plan": "Revised plan",
}

_SCORE = re.compile(r"(?:→|->|=>|—|-)?\s*\(?\s*score\s*[:=]\s*([01](?:\.\d+)?|\.\d+)\s*\)?", re.I)
_CANDIDATE_NO = re.compile(r"candidate\s+(\d+)", re.I)
_DECISION = re.compile(r"^\s*=+\s*decision\s+point\s*=*\s*$", re.I)
_FENCE = re.compile(r"^\s*(```|~~~)")


def _label_regex(labels: dict[str, str]) -> re.Pattern[str]:
    # Labels may be decorated as markdown: "**Thought:**", "- Action:", "### Plan:".
    words = "|".join(sorted(labels, key=len, reverse=True))
    return re.compile(
        rf"^\s*(?:[-*>]\s+)?(?:#+\s*)?(\*\*|__)?\s*({words})\s*(?:\*\*|__)?\s*:"
        rf"\s*(?(1)(?:\*\*|__)?)\s*(.*)$",
        re.IGNORECASE,
    )


class StrategyParser:
    """Turns streamed strategy text into steps.

    Feeding the text in any chunking and then calling ``finish()`` yields exactly the
    steps of parsing it whole: a step is emitted once the next label line (or the end)
    proves it complete; ``pending()`` shows the step still being written.
    """

    def __init__(self, strategy: str) -> None:
        if strategy not in _LABELS:
            raise ValueError(f"no parser for strategy {strategy!r}")
        self.strategy = strategy
        self._labels = _LABELS[strategy]
        self._label_re = _label_regex(self._labels)
        self._kinds = [(re.compile(rf"^{w}$", re.I), k) for w, k in self._labels.items()]
        self._buffer = ""
        self._current: tuple[str, str, list[str]] | None = None  # (kind, label, lines)
        self._in_fence = False
        self._decision_point = 1
        self._candidates: dict[int, Branch] = {}
        self._last_action: Action | None = None
        self.steps: list[StrategyStep] = []

    def feed(self, text: str) -> list[StrategyStep]:
        self._buffer += text
        out: list[StrategyStep] = []
        while True:
            newline = self._buffer.find("\n")
            if newline < 0:
                break
            line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
            out.extend(self._line(line.rstrip("\r")))
        return out

    def finish(self) -> list[StrategyStep]:
        out: list[StrategyStep] = []
        if self._buffer:
            line, self._buffer = self._buffer, ""
            out.extend(self._line(line.rstrip("\r")))
        out.extend(self._close())
        return out

    def pending(self) -> StrategyStep | None:
        """The step currently being written (plus the unterminated line), if any.

        The unterminated line is read as if it ended now, so "Final Answer: The me…"
        already shows as the final answer in progress, not as text of the step before.
        """
        state = self
        if self._buffer:
            state = copy.copy(self)  # a throwaway fork: the real state never changes here
            state.steps = []
            state._candidates = dict(self._candidates)
            if self._current is not None:
                state._current = (self._current[0], self._current[1], list(self._current[2]))
            state._line(self._buffer.rstrip("\r"))
        if state._current is None:
            return None
        kind, label, lines = state._current
        return state._build(kind, label, lines, peek=True)

    def _continues(self, kind: str) -> bool:
        """Whether a label line of ``kind`` continues the open step instead of starting one."""
        owner = _CONTINUATIONS.get(kind)
        return owner is not None and self._current is not None and self._current[0] == owner

    # internals -----------------------------------------------------------------
    def _kind_of(self, word: str) -> str:
        for pattern, kind in self._kinds:
            if pattern.match(word):
                return kind
        return "thought"

    def _line(self, line: str) -> list[StrategyStep]:
        if _FENCE.match(line):
            self._in_fence = not self._in_fence
            return self._append(line)
        if self._in_fence:
            return self._append(line)
        if self.strategy == "tot" and _DECISION.match(line):
            out = self._close()
            if self._candidates:
                self._decision_point += 1
                self._candidates = {}
            return out
        match = self._label_regex_match(line)
        if match is None:
            return self._append(line)
        word, rest = match
        kind = self._kind_of(word)
        if self._continues(kind):
            # Continuations that belong to the step before them.
            self._current[2].append(f"\x00{kind}\x00{rest}")
            return []
        out = self._close()
        self._current = (kind, word, [rest] if rest else [])
        return out

    def _label_regex_match(self, line: str) -> tuple[str, str] | None:
        m = self._label_re.match(line)
        if not m:
            return None
        return m.group(2), m.group(3)

    def _append(self, line: str) -> list[StrategyStep]:
        if self._current is not None:
            self._current[2].append(line)
        return []

    def _close(self) -> list[StrategyStep]:
        if self._current is None:
            return []
        kind, label, lines = self._current
        self._current = None
        step = self._build(kind, label, lines, peek=False)
        if step is None:
            return []
        self.steps.append(step)
        return [step]

    def _build(self, kind: str, label: str, lines: list[str], *, peek: bool) -> StrategyStep | None:
        main: list[str] = []
        extra: dict[str, list[str]] = {}
        target = main
        for line in lines:
            if line.startswith("\x00"):
                _, sub, rest = line.split("\x00", 2)
                target = extra.setdefault(sub, [])
                if rest:
                    target.append(rest)
            else:
                target.append(line)
        text = "\n".join(main).strip()
        if kind in _THOUGHT_LABELS:
            name = _THOUGHT_LABELS[kind]
            return Thought(text=text, label=name) if text or peek else None
        if kind == "step":
            number = re.sub(r"\s+", " ", label.strip()).title()
            return Thought(text=text, label=number)
        if kind == "action":
            return self._action(text, "\n".join(extra.get("action_input", [])).strip())
        if kind == "observation":
            return Observation(text=text)
        if kind == "reflect":
            plan = "\n".join(extra.get("revised_plan", [])).strip()
            return Reflection(critique=text, revised_plan=plan)
        if kind == "final":
            return FinalAnswer(text=text)
        if kind == "candidate":
            return self._candidate(label, text, peek)
        if kind == "selected":
            return self._selected(text, peek)
        return Thought(text=text)

    def _action(self, text: str, action_input: str) -> Action:
        first_line = text.splitlines()[0] if text else ""
        call = re.match(r"^`?([A-Za-z_][\w.-]*)`?\s*(?:\((.*)\))?\s*(.*)$", first_line, re.S)
        tool, args_text = (call.group(1), call.group(2) or call.group(3)) if call else (first_line, "")
        args_text = action_input or args_text or ""
        return Action(tool=tool or "?", args=_parse_args(args_text))

    def _candidate(self, label: str, text: str, peek: bool) -> Branch | None:
        number = _CANDIDATE_NO.search(label)
        branch_id = int(number.group(1)) if number else len(self._candidates) + 1
        score_match = _SCORE.search(text)
        score = float(score_match.group(1)) if score_match else 0.0
        thought = (_SCORE.sub("", text) if score_match else text).strip().rstrip("→-—=> ").strip()
        branch = Branch(branch_id=branch_id, thought=thought, score=score,
                        decision_point=self._decision_point)
        if not peek:
            self._candidates[branch_id] = branch
        return branch

    def _selected(self, text: str, peek: bool) -> Branch | Thought | None:
        number = _CANDIDATE_NO.search(text) or re.match(r"^\s*(\d+)", text)
        if not number:
            return Thought(text=text, label="Selected")
        branch_id = int(number.group(1))
        chosen = self._candidates.get(branch_id)
        score_match = _SCORE.search(text)
        score = float(score_match.group(1)) if score_match else (chosen.score if chosen else 0.0)
        return Branch(
            branch_id=branch_id,
            thought=chosen.thought if chosen else "",
            score=score,
            decision_point=self._decision_point,
            selected=True,
        )


def _parse_args(text: str) -> Any:
    text = text.strip()
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return {"input": text}


def parse_strategy_text(text: str, strategy: str) -> list[StrategyStep]:
    parser = StrategyParser(strategy)
    parser.feed(text)
    parser.finish()
    return parser.steps


# ── Strategies ───────────────────────────────────────────────────────────────

_TOOLS_NOTE = (
    "Tools are called through the tool-calling interface, not by writing them as text; "
    "write the labelled lines around your tool calls so your reasoning can be followed."
)


class ReasoningStrategy:
    """Base class: a named prompt plus a convergence rule."""

    key: str = ""
    name: str = ""
    description: str = ""

    def __init__(self, max_steps: int = 15) -> None:
        self._max_steps = max_steps

    @property
    def max_steps(self) -> int:
        return self._max_steps

    def system_prompt(self, agent_id: str, working_directory: str) -> str:
        raise NotImplementedError

    def is_complete(self, steps: list[StrategyStep]) -> bool:
        if len(steps) >= self.max_steps:
            return True
        return any(isinstance(s, FinalAnswer) for s in steps)

    def limit_reached(self, steps: list[StrategyStep], model_calls: int) -> bool:
        """Whether the harness must stop the turn for this strategy's own limits.

        The prompt promises at most ``max_steps`` reasoning cycles; one model call is one
        cycle (a call writes several labelled steps), so cycles are counted here, not
        parsed steps. A final answer is not a limit: the model sees its tool results.
        """
        return model_calls >= self.max_steps

    def parser(self) -> StrategyParser:
        return StrategyParser(self.key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(max_steps={self.max_steps})"


class ReActStrategy(ReasoningStrategy):
    key = "react"
    name = "ReAct"
    description = "Reasoning + Acting: alternate between Thought, Action, and Observation steps"

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
- {_TOOLS_NOTE}

## Completion
When the task is complete, write "Final Answer:" followed by your answer, and stop."""


class ReflexionStrategy(ReasoningStrategy):
    key = "reflexion"
    name = "Reflexion"
    description = "Self-critique after each action cycle with iterative plan refinement"

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
- {_TOOLS_NOTE}"""

    def is_complete(self, steps: list[StrategyStep]) -> bool:
        reflections = sum(isinstance(s, Reflection) for s in steps)
        return reflections >= self.max_reflections or super().is_complete(steps)

    def limit_reached(self, steps: list[StrategyStep], model_calls: int) -> bool:
        reflections = sum(isinstance(s, Reflection) for s in steps)
        return reflections >= self.max_reflections or super().limit_reached(steps, model_calls)


class ChainOfThoughtStrategy(ReasoningStrategy):
    key = "cot"
    name = "Chain-of-Thought"
    description = "Step-by-step reasoning before taking action"

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
- {_TOOLS_NOTE}"""


class TreeOfThoughtsStrategy(ReasoningStrategy):
    key = "tot"
    name = "Tree-of-Thoughts"
    description = "Multi-branch exploration with scoring and pruning"

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
- {_TOOLS_NOTE}"""

    def pruned(self, steps: list[StrategyStep]) -> list[Branch]:
        """Candidates below the pruning threshold (shown as pruned in tree views)."""
        return [s for s in steps if isinstance(s, Branch) and not s.selected and s.score < self.pruning_threshold]


class StrategyPreset(Enum):
    REACT = "react"
    REFLEXION = "reflexion"
    CHAIN_OF_THOUGHT = "cot"
    TREE_OF_THOUGHTS = "tot"

    def create(self) -> ReasoningStrategy:
        return _FACTORIES[self]()

    @classmethod
    def all(cls) -> list[StrategyPreset]:
        return list(cls)

    @classmethod
    def from_name(cls, name: str) -> StrategyPreset:
        """Accepts keys and names: react, reflexion, cot, chain-of-thought, tot, ..."""
        key = re.sub(r"[\s_]+", "-", str(name).strip().lower())
        key = _ALIASES.get(key, key)
        try:
            return cls(key)
        except ValueError:
            choices = ", ".join(p.value for p in cls)
            raise ValueError(f"unknown strategy {name!r}; choose one of: {choices}, none") from None

    def __str__(self) -> str:
        return _FACTORIES[self].name


_FACTORIES: dict[StrategyPreset, type[ReasoningStrategy]] = {
    StrategyPreset.REACT: ReActStrategy,
    StrategyPreset.REFLEXION: ReflexionStrategy,
    StrategyPreset.CHAIN_OF_THOUGHT: ChainOfThoughtStrategy,
    StrategyPreset.TREE_OF_THOUGHTS: TreeOfThoughtsStrategy,
}
_ALIASES = {
    "chain-of-thought": "cot", "chain-of-thoughts": "cot", "chainofthought": "cot",
    "tree-of-thoughts": "tot", "tree-of-thought": "tot", "treeofthoughts": "tot",
}


def resolve_strategy(value: ReasoningStrategy | StrategyPreset | str | None) -> ReasoningStrategy | None:
    """None/"none"/"" → no strategy; a preset or its name → a fresh default instance."""
    if value is None or isinstance(value, ReasoningStrategy):
        return value
    if isinstance(value, StrategyPreset):
        return value.create()
    if str(value).strip().lower() in ("", "none", "off"):
        return None
    return StrategyPreset.from_name(value).create()
