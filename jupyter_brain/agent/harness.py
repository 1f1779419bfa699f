"""AgentHarness: wires provider, tools, thinking, reflection, strategy and logging.

A harness answers one turn at a time (``run_turn``); the turn itself — its state, its
steps and how it ends — is the loop, ``agent/loop/``, which gets a ``TurnSetup`` and never
calls back. The optional integrations plug into the loop through ``agent/hooks.py``: each
is registered below with one line. What a conversation learns across turns
(token-count calibration, the context level, the thinking counters) lives in a
``SessionState``: pass the session's own to carry it from cell to cell, or let the
harness keep one for the turns it runs.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from ..foundation.tokens import TokenCounter
from ..providers.base import LLMProvider, Usage
from ..providers.capabilities import has_native_thinking
from .artifacts import ArtifactStore, artifact_tool
from .callbacks import AgentCallbacks
from .context import CompactionStrategy, ContextWarningTracker, context_window_for
from .context.fitting import ContextFitter, offered_tools
from .cost import ModelPrice, SessionCostTracker, price_for
from .cost_caps import BudgetCaps
from .decisions import AutonomousResearchLearner, RuntimeDecisionStore
from .decisions.tool_learner import tool_boosts_of
from .events import EventLog
from .executor import Approver, BoundedToolExecutor
from .harness_settings import HarnessSettings
from .hooks import Integration, TurnHook, as_integration
from .integrations.budget import BudgetIntegration
from .integrations.checkpoints import CheckpointsIntegration
from .integrations.citations import CitationsIntegration
from .integrations.context_pack import ContextPackIntegration
from .integrations.decisions import DecisionRecording, ToolLearning
from .integrations.memory import MemoryIntegration
from .integrations.recording import RecordingIntegration
from .integrations.request_log import RequestLogIntegration
from .integrations.runtime import RuntimeIntegration
from .integrations.server_tools import ServerToolsIntegration
from .integrations.thinking_phase import ThinkingPhaseIntegration
from .integrations.tracing import TracingIntegration
from .integrations.web import WebIntegration
from .loop import EventEmitter, RetryPolicy, Turn, TurnSetup
from .memory import MemoryExtractor, MemoryRetriever
from .provenance import PromptProvenance
from .redact import Redactor
from .reflection import ReflectionEngine
from .results import StepRecord, ToolCallRecord, TurnResult
from .session_state import SessionState
from .strategies import ReasoningStrategy, StrategyPreset
from .thinking import ThinkingManager, ThinkLevel
from .tools import AgentToolRegistry
from .turn_options import TurnOptions

__all__ = ["SYSTEM_PROMPT", "AgentHarness", "StepRecord", "ToolCallRecord", "TurnResult"]

SYSTEM_PROMPT = """You are jupyter-brain, an assistant that works inside the user's Jupyter kernel.
You can inspect the user's variables and files and, when permitted, run Python in their
kernel through tools. Prefer looking at the real data over guessing. Keep answers concise
and in Markdown; show small tables or numbers that support your answer. When a tool fails,
read the error and adjust instead of repeating the same call."""

TOOL_CALL_TIMEOUT_S = 45
TOOL_MESSAGE_MAX_CHARS = 12_000


class AgentHarness:
    """Runs bounded agent turns; every keyword is the reference design's (see DESIGN.md)."""

    def __init__(
        self,
        provider: LLMProvider,
        tools: AgentToolRegistry | None,
        event_log: EventLog | None,
        *,
        memory_retriever: MemoryRetriever | None = None,
        memory_extractor: MemoryExtractor | None = None,
        autonomous_research_learner: AutonomousResearchLearner | None = None,
        decision_store: RuntimeDecisionStore | None = None,
        max_steps: int = 6,
        timeout_s: float = 60,
        think_level: ThinkLevel | str = ThinkLevel.OFF,
        reflect_every: int = 0,
        callbacks: AgentCallbacks | None = None,
        stream: bool = False,
        system_prompt: str | None = None,
        prompt_id: str | None = None,
        prompt_version: str | None = None,
        prompt_tags: frozenset[str] | None = None,
        prompt_engine: str | None = None,
        prompt_render_hash: str | None = None,
        prompt_variables: tuple[str, ...] | None = None,
        redact_logs: bool = False,
        cost_tracker: SessionCostTracker | None = None,
        checkpoint_store: Any = None,
        parallel_enabled: bool = True,
        run_context_metadata: dict[str, Any] | None = None,
        enable_tool_validation: bool = True,
        enable_semantic_selection: bool = False,
        max_tools_per_turn: int = 25,
        auto_compact: bool = True,
        compaction: CompactionStrategy | str = "summary",
        context_budget: int | None = None,
        context_window: int | None = None,
        compaction_target: float = 0.6,
        token_counter: TokenCounter | None = None,
        strategy: ReasoningStrategy | StrategyPreset | str | None = None,
        workspace: Callable[[], str] | None = None,
        approver: Approver | None = None,
        artifacts: ArtifactStore | None = None,
        max_reflections: int = 4,
        reflect_on_tool_error: bool = True,
        reflect_on_uncertainty: bool = True,
        agent_id: str = "jupyter-brain",
        working_directory: str = ".",
        prompt_directory: str | None = None,
        secrets: tuple[str, ...] = (),
        session_state: SessionState | None = None,
        thinking_phase: bool = False,
        thinking_strategy: CompactionStrategy | str = "summary",
        thinking_provider: LLMProvider | None = None,
        web_search: Callable[..., Any] | None = None,
        hooks: Sequence[Integration | TurnHook] = (),
    ) -> None:
        self.settings = HarnessSettings(
            max_steps=max_steps, timeout_s=timeout_s, think_level=think_level, reflect_every=reflect_every,
            stream=stream, system_prompt=system_prompt, redact_logs=redact_logs,
            parallel_enabled=parallel_enabled, enable_tool_validation=enable_tool_validation,
            enable_semantic_selection=enable_semantic_selection, max_tools_per_turn=max_tools_per_turn,
            auto_compact=auto_compact, compaction=compaction, context_budget=context_budget,
            context_window=context_window, compaction_target=compaction_target, strategy=strategy,
            max_reflections=max_reflections, reflect_on_tool_error=reflect_on_tool_error,
            reflect_on_uncertainty=reflect_on_uncertainty, agent_id=agent_id,
            working_directory=working_directory, prompt_directory=prompt_directory, secrets=secrets,
            thinking_phase=thinking_phase,
            thinking_strategy=thinking_strategy,
        )
        self.thinking_provider = thinking_provider
        # The reference design's optional integrations: None leaves each one out.
        self.memory_retriever = memory_retriever
        self.memory_extractor = memory_extractor
        self.autonomous_research_learner = autonomous_research_learner
        self.decision_store = decision_store
        self.web_search = web_search  # a search function for web_mode="on" (see agent/web)
        self.prompt_provenance = PromptProvenance(
            prompt_id=prompt_id, prompt_version=prompt_version, prompt_tags=prompt_tags,
            prompt_engine=prompt_engine, prompt_render_hash=prompt_render_hash,
            prompt_variables=prompt_variables,
        )
        self.run_context_metadata = dict(run_context_metadata or {})
        self.provider = provider
        self.tools = tools if tools is not None else AgentToolRegistry()
        self.event_log = event_log
        self.callbacks = callbacks or AgentCallbacks()
        self.cost_tracker = cost_tracker
        self.checkpoint_store = checkpoint_store
        self.workspace = workspace
        self.approver = approver
        self.session_state = session_state or SessionState(token_counter)
        self.context_window = int(context_window or context_window_for(getattr(provider, "model", None)))
        # The budget is the window the tracker measures against: requests stay under its
        # critical share; compaction brings them down to compaction_target of it.
        self.context_budget = int(min(context_budget or self.context_window, self.context_window))
        self.compactions = 0
        self.redactor = Redactor(secrets) if redact_logs else None
        if self.redactor is not None and event_log is not None and event_log._redact is None:
            event_log._redact = self.redactor
        self.artifacts = artifacts or ArtifactStore()
        if "read_artifact" not in self.tools:
            self.tools.register(artifact_tool(self.artifacts))
        self.thinking: ThinkingManager = self.session_state.thinking_manager(self.settings.thinking_config())
        self.reflection_engine = ReflectionEngine(provider, self.thinking, self.callbacks)
        self._executor = BoundedToolExecutor(
            self.tools, artifacts=self.artifacts, parallel_enabled=parallel_enabled,
            enable_validation=enable_tool_validation, approver=approver, output_limit=TOOL_MESSAGE_MAX_CHARS,
        )
        phase_strategy, counter = self.settings.thinking_compactor, self.session_state.counter
        # Each turn's hooks (agent/hooks.py), called in this order: the built-in integrations
        # (one line each; agent/integrations/), then the user's.
        memory_on = memory_retriever is not None or memory_extractor is not None
        self.integrations: list[Integration] = [integration for integration in (
            CheckpointsIntegration(checkpoint_store) if checkpoint_store is not None else None,
            # run_turn(budget=...): checks each model call before the other hooks see it
            BudgetIntegration(counter, event_log),
            TracingIntegration(self.redactor or Redactor(secrets), agent_id),
            DecisionRecording(decision_store) if decision_store is not None else None,
            ToolLearning(autonomous_research_learner) if autonomous_research_learner is not None else None,
            WebIntegration(web_search, self.artifacts.root),
            # the provider's own calls (server tools) as tool rows
            ServerToolsIntegration(),
            MemoryIntegration(memory_retriever, memory_extractor) if memory_on else None,
            RuntimeIntegration(),
            ContextPackIntegration(),
            ThinkingPhaseIntegration(phase_strategy, thinking_provider or provider, counter) if thinking_phase else None,
            CitationsIntegration(),
            RecordingIntegration(),
            # the last request as a record: %agent inspect of earlier kernels' turns
            RequestLogIntegration(),
            *(as_integration(h) for h in hooks),
        ) if integration is not None]
        self._turn_lock = threading.Lock()
        self.retry = RetryPolicy()  # transient model failures mid-stream (tests swap its wait)
        self._price_memo: tuple[tuple[str | None, str | None], ModelPrice | None] | None = None

    # settings read by views, the notebook layer and tests --------------------------------
    @property
    def max_steps(self) -> int:
        return self.settings.max_steps

    @property
    def timeout_s(self) -> float:
        return self.settings.timeout_s

    @property
    def think_level(self) -> ThinkLevel:
        return self.settings.level

    @property
    def stream(self) -> bool:
        return self.settings.stream

    @property
    def strategy(self) -> ReasoningStrategy | None:
        return self.settings.reasoning_strategy

    @property
    def compaction(self) -> CompactionStrategy:
        return self.settings.compactor

    @property
    def auto_compact(self) -> bool:
        return self.settings.auto_compact

    @property
    def counter(self) -> TokenCounter:
        return self.session_state.counter

    @property
    def context(self) -> ContextWarningTracker:
        """The session's context levels, measured against this harness's budget."""
        return self.session_state.context_tracker(self.context_budget)

    @property
    def approval_timeout_s(self) -> float:
        return float(getattr(self.approver, "timeout_s", 0) or 0)

    # public -----------------------------------------------------------------------------
    def build_system_prompt(self) -> str:
        s = self.settings
        base = s.system_prompt or SYSTEM_PROMPT
        if self.strategy is not None:
            directory = s.working_directory if s.prompt_directory is None else s.prompt_directory
            base = f"{base}\n\n{self.strategy.system_prompt(s.agent_id, directory)}"
        return self.thinking.get_thinking_prompt(base, native=has_native_thinking(self.provider))

    def run_turn(
        self,
        session_id: str,
        history: list[dict[str, Any]],
        user_message: str,
        *,
        top_k: int = 0,
        web_mode: str = "off",
        show_citations: bool = False,
        runtime_provider: str = "",
        runtime_model: str = "",
        runtime_environment: bool = True,
        skill_context: str | None = None,
        budget: BudgetCaps | None = None,
        turn_id: str | None = None,
        on_event: Callable[[Any], Any] | None = None,
        cancel: threading.Event | None = None,
        persist_history: bool = True,
    ) -> TurnResult:
        """Run one turn. Never raises for model, tool or interrupt failures: see ``status``.

        Turns on one harness run one at a time (the thinking state is per conversation);
        use one harness per concurrent conversation. ``top_k`` … ``skill_context`` are the
        reference design's turn parameters (``TurnOptions``); ``budget`` caps what the turn
        may spend (``BudgetCaps``: a call that could cross a cap is not made, status ``budget``).
        """
        options = TurnOptions(top_k=top_k, web_mode=web_mode, show_citations=show_citations,  # type: ignore[arg-type]
                              runtime_provider=runtime_provider, runtime_model=runtime_model,
                              runtime_environment=runtime_environment, skill_context=skill_context,
                              budget=budget)
        with self._turn_lock:
            turn_id = turn_id or uuid.uuid4().hex[:12]
            emit = EventEmitter(session_id=session_id, turn_id=turn_id, event_log=self.event_log,
                                callbacks=self.callbacks, redact=self.redactor, extra=on_event)
            turn = Turn(self.turn_setup(), session_id, turn_id, history, user_message, emit=emit, cancel=cancel,
                        persist_history=persist_history, options=options)
            try:
                result = turn.run()
            finally:
                self.compactions += turn.fitter.compactions
            turn.hooks.after_turn(result)  # the integrations that learn from it: decisions, memory
            return result

    # used by the turn ------------------------------------------------------------------------
    def turn_setup(self) -> TurnSetup:
        """What the next turn takes from this harness (read when it starts)."""
        system_prompt = self.build_system_prompt()
        return TurnSetup(
            settings=self.settings, provider=self.provider, event_log=self.event_log, callbacks=self.callbacks,
            thinking=self.thinking, reflection=self.reflection_engine, retry=self.retry, redactor=self.redactor,
            counter=self.counter, context=self.context, context_budget=self.context_budget,
            system_prompt=system_prompt, provenance=self.prompt_provenance.rendered(system_prompt),
            run_context=self.run_context_metadata, workspace=self.workspace, executor=self._executor,
            approval_timeout_s=self.approval_timeout_s, price=self.cost_of, integrations=self.integrations,
        )

    def offered_tools(self, history: list[dict[str, Any]], user_message: str) -> list[dict[str, Any]]:
        """The registry's tools a turn would offer now (asked outside a turn: ranked by the
        ``autonomous_research_learner`` when semantic selection picks some)."""
        s = self.settings
        boosts = [b for b in [tool_boosts_of(self.autonomous_research_learner)] if b is not None]
        always, keywords = self.tools.selection_hints()
        return offered_tools(self.tools.schemas(), history, user_message, semantic=s.enable_semantic_selection,
                             max_tools=s.max_tools_per_turn, tool_boosts=boosts, always=always, keywords=keywords)

    def context_fitter(self, tool_schemas: list[dict[str, Any]]) -> ContextFitter:
        s = self.settings
        return ContextFitter(
            counter=self.counter, tracker=self.context, compaction=s.compactor, budget_tokens=self.context_budget,
            target=s.compaction_target, auto_compact=s.auto_compact, provider=self.provider,
            tool_schemas=tool_schemas, workspace=self.workspace,
        )

    def cost_of(self, usage: Usage, turn_id: str, *, provider: Any = None, thinking_phase: bool = False) -> float | None:
        """The cost of a call (recorded on the session's tracker when there is one);
        ``provider``: the model that made it, when not this harness's (the thinking phase's)."""
        if provider is not None and provider is not self.provider:
            model, name = getattr(provider, "model", None), getattr(provider, "name", None)
            if self.cost_tracker is not None:
                return self.cost_tracker.record(turn_id, usage, model, name, thinking_phase=thinking_phase)
            price = price_for(model, name)
            return None if price is None else price.cost(usage)
        model = getattr(self.provider, "model", None)
        name = getattr(self.provider, "name", None)
        if self.cost_tracker is not None:
            return self.cost_tracker.record(turn_id, usage, model, name, thinking_phase=thinking_phase)
        if self._price_memo is None or self._price_memo[0] != (model, name):  # looked up once
            self._price_memo = ((model, name), price_for(model, name))
        price = self._price_memo[1]
        return None if price is None else price.cost(usage)

