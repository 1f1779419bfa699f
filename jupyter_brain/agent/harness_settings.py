"""HarnessSettings: the knobs of a harness, validated once, in one object.

``AgentHarness(...)`` keeps the reference design's keyword arguments for its public API;
inside, they become this object, which the turn, the context fitter and the tool step read.
"""

from __future__ import annotations

from dataclasses import dataclass

from .context import CompactionStrategy, compaction_strategy
from .strategies import ReasoningStrategy, StrategyPreset, resolve_strategy
from .thinking import ThinkingConfig, ThinkLevel

DEFAULT_AGENT_ID = "jupyter-brain"


@dataclass
class HarnessSettings:
    max_steps: int = 6
    timeout_s: float = 60.0
    think_level: ThinkLevel | str = ThinkLevel.OFF
    reflect_every: int = 0
    stream: bool = False
    system_prompt: str | None = None
    redact_logs: bool = False
    parallel_enabled: bool = True
    enable_tool_validation: bool = True
    enable_semantic_selection: bool = False
    max_tools_per_turn: int = 25
    auto_compact: bool = True
    compaction: CompactionStrategy | str = "summary"
    context_budget: int | None = None
    context_window: int | None = None
    compaction_target: float = 0.6
    strategy: ReasoningStrategy | StrategyPreset | str | None = None
    max_reflections: int = 4
    reflect_on_tool_error: bool = True
    reflect_on_uncertainty: bool = True
    agent_id: str = DEFAULT_AGENT_ID
    working_directory: str = "."
    # The working directory as the system prompt names it (None: working_directory itself);
    # a notebook run for the same request on every machine names only the folder.
    prompt_directory: str | None = None
    secrets: tuple[str, ...] = ()
    thinking_phase: bool = False
    thinking_strategy: CompactionStrategy | str = "summary"

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if not 0 < self.compaction_target < 1:
            raise ValueError("compaction_target must be between 0 and 1 (a share of the context budget)")
        if self.context_budget is not None and self.context_budget < 1_000:
            raise ValueError("context_budget must be at least 1,000 tokens")
        self.max_steps = int(self.max_steps)
        self.timeout_s = float(self.timeout_s)
        self.think_level = ThinkLevel.from_string(self.think_level)
        self.reflect_every = int(self.reflect_every)
        self.compaction_target = float(self.compaction_target)
        if isinstance(self.compaction, str):
            self.compaction = compaction_strategy(self.compaction)
        self.strategy = resolve_strategy(self.strategy)
        self.thinking_phase = bool(self.thinking_phase)
        if isinstance(self.thinking_strategy, str):
            self.thinking_strategy = compaction_strategy(self.thinking_strategy)

    @property
    def level(self) -> ThinkLevel:
        """``think_level`` as the enum (``__post_init__`` normalizes it)."""
        return ThinkLevel.from_string(self.think_level)

    @property
    def reasoning_strategy(self) -> ReasoningStrategy | None:
        """``strategy`` as an instance (``__post_init__`` resolves it; this returns that one)."""
        return resolve_strategy(self.strategy)

    @property
    def compactor(self) -> CompactionStrategy:
        """``compaction`` as an instance (``__post_init__`` resolves it)."""
        c = self.compaction
        return compaction_strategy(c) if isinstance(c, str) else c

    @property
    def thinking_compactor(self) -> CompactionStrategy:
        """``thinking_strategy`` as an instance: the thinking phase's compaction strategy."""
        c = self.thinking_strategy
        return compaction_strategy(c) if isinstance(c, str) else c

    def thinking_config(self) -> ThinkingConfig:
        return ThinkingConfig(
            level=self.level,
            reflect_every=self.reflect_every,
            reflect_on_tool_error=self.reflect_on_tool_error,
            reflect_on_uncertainty=self.reflect_on_uncertainty,
        )
