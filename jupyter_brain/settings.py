"""The kernel's agent settings, written once: name, type, default, allowed values, help.

Everything else is derived from ``SETTINGS``: the ``%%agent`` / ``%%compare`` flags
(``jupyter_brain.notebook.parsers``), the ``AgentMagics`` traitlets (``setting_trait``),
the keys of ``%agent config`` (``CONFIG_KEYS``) and the pydantic ``AgentOptions``
(``jupyter_brain.settings_model``) and the docs' settings and flags reference (docs/hooks/reference.py).

Plain Python on purpose (plus traitlets, which IPython has loaded already): this module
is imported by ``%load_ext jupyter_brain``, which must stay fast and must not import
pydantic or the agent core. The strategy names belong to the agent
(``jupyter_brain.agent.strategies.names``), so they are looked up on first use rather
than at import.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from traitlets import Bool, CaselessStrEnum, Dict, Float, Int, TraitType, Unicode

THINK_CHOICES = ("off", "low", "medium", "high")
PERMISSION_CHOICES = ("read-only", "ask", "auto")
# The compaction registry lives in the agent core (too heavy for load time); a test
# checks these names and aliases against it.
COMPACTION_CHOICES = ("summary", "token_budget", "semantic")
COMPACTION_ALIASES = {"sliding": "summary", "sliding_window": "summary", "budget": "token_budget",
                      "relevance": "semantic", "bm25": "semantic"}
THINKING_PHASE_CHOICES = ("off", *COMPACTION_CHOICES)  # off, or the phase's compaction strategy
FOLD_CHOICES = ("auto", "never")  # the AgentView's process fold
MEMORY_CHOICES = ("off", "manual", "auto")  # the agent's MEMORY_MODES (a test checks)
WEB_CHOICES = ("on", "off")  # the agent's WEB_MODES (agent/turn_options.py; a test checks)
# The runtime message: which model answers plus today's date and the kernel's Python (full),
# only which model answers (model: the same request on every machine and day), or none.
RUNTIME_CHOICES = ("full", "model", "off")
REPLAY_CHOICES = ("auto", "off", "strict")  # a cell's recorded model calls (issue #24; providers/replay)


def strategy_choices() -> tuple[str, ...]:
    """``react, reflexion, cot, tot, none`` from the agent's one list of strategy names."""
    from .agent.strategies.names import STRATEGY_CHOICES

    return tuple(STRATEGY_CHOICES)


def strategy_key(text: str) -> str:
    """A strategy name or alias as its key (``"Chain of Thought"`` → ``cot``); ``off`` → ``none``."""
    from .agent.strategies.names import NO_STRATEGY, OFF_VALUES, canonical_strategy

    return NO_STRATEGY if text.strip().lower() in OFF_VALUES else canonical_strategy(text)


@dataclass(frozen=True)
class Setting:
    """One kernel default (``%config AgentMagics.<name>``), optionally a cell flag too.

    ``choices`` is a tuple, or a function giving it (looked up when first needed);
    ``canonical()`` turns a user's spelling into the value it means (``read_only`` →
    ``read-only``, ``bm25`` → ``semantic``; ``key`` replaces its rules) before it is checked.
    ``ge`` / ``gt`` / ``le`` bound numbers; the flag only checks the sign at parse time
    and ``AgentOptions`` checks the bounds. ``zero_is_none``: 0 means "not set" (the
    trait holds 0, ``AgentOptions`` holds None). ``agent_config``: also a key of
    ``%agent config`` and a field of ``AgentOptions`` (the settings of one turn).
    """

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] = ()
    aliases: dict[str, str] = field(default_factory=dict)
    key: Callable[[str], str] | None = None
    flag: str | None = None
    metavar: str | None = None
    off_flag: str | None = None  # a bool's negative flag, e.g. --no-stream
    off_help: str | None = None
    nullable: bool = False
    zero_is_none: bool = False
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    agent_config: bool = True
    env: str | None = None  # an environment variable whose value, when set, is the kernel's default

    def initial(self) -> Any:
        """The kernel's default: ``env``'s value when it is set to an allowed value, else ``default``.

        Read when ``AgentMagics`` is defined (at ``%load_ext``), so it holds for every kernel
        started with it, as CI's second notebook pass does (``JUPYTER_BRAIN_REPLAY=off``). A
        value that is not allowed is one warning line, and the default holds."""
        raw = os.environ.get(self.env, "").strip() if self.env else ""
        if not raw:
            return self.default
        value = self.canonical(raw)
        if self.allowed() and value not in self.allowed():
            warnings.warn(f"{self.env}={raw!r} is not one of {', '.join(self.allowed())}: "
                          f"AgentMagics.{self.name} stays {self.default!r}", stacklevel=2)
            return self.default
        return value

    def allowed(self) -> tuple[str, ...]:
        """The allowed values (empty: any value of the type)."""
        return self.choices() if callable(self.choices) else self.choices

    def canonical(self, text: str) -> str:
        """Lower case, ``-`` / ``_`` as the choices write them, aliases resolved."""
        if self.key is not None:
            return self.key(text)
        value = text.strip().lower()
        written = "".join(self.allowed())
        if "-" in written:
            value = value.replace("_", "-")
        elif "_" in written:
            value = value.replace("-", "_")
        return self.aliases.get(value, value)


# Listed in the order `%agent config` and `%agent status` print them.
SETTINGS: dict[str, Setting] = {s.name: s for s in (
    Setting("provider", str, "auto",
            "anthropic, openai, ollama, vllm, scripted, auto, a chain tried in order (anthropic,ollama), "
            "or a variable holding a provider",
            flag="--provider", metavar="P"),
    Setting("model", str, None, "model id", flag="--model", metavar="M", nullable=True),
    Setting("think", str, "off", "thinking depth", choices=THINK_CHOICES, flag="--think"),
    Setting("reflect_every", int, 0, "reflect every N steps (0 = never)", flag="--reflect-every", metavar="N", ge=0),
    Setting("strategy", str, "none", "reasoning strategy", choices=strategy_choices, key=strategy_key,
            flag="--strategy"),
    Setting("max_steps", int, 6, "model calls allowed in the turn", flag="--max-steps", metavar="N", ge=1, le=200),
    Setting("timeout", float, 120.0, "seconds allowed for the turn", flag="--timeout", metavar="S",
            gt=0, le=24 * 3600),
    Setting("permission", str, "ask", "what tools may do", choices=PERMISSION_CHOICES, flag="--permission"),
    Setting("stream", bool, True, "stream answers (default)", flag="--stream",
            off_flag="--no-stream", off_help="wait for whole answers"),
    Setting("compaction", str, "summary", "how history is shortened at the critical context level",
            choices=COMPACTION_CHOICES, aliases=COMPACTION_ALIASES, flag="--compaction"),
    Setting("context_budget", int, 0, "keep requests under this many tokens (default: the model's window)",
            flag="--context-budget", metavar="TOKENS", zero_is_none=True, ge=1_000),
    Setting("thinking_phase", str, "off", "a thinking phase after each tool cycle keeps a compact task state "
            "instead of bulk tool output (off, or its strategy)", choices=THINKING_PHASE_CHOICES,
            aliases=COMPACTION_ALIASES, flag="--thinking-phase"),
    Setting("cells", bool, False, "also put the code the agent ran (run_python) into a new cell below, so Run All "
            "reproduces it", flag="--cells", off_flag="--no-cells", off_help="do not add a code cell (default)"),
    Setting("max_cost_per_turn", float, 0.0, "stop a turn before a model call that could take its cost over USD "
            "(checked before each call; 0 = no cap; in %%compare: all runs together)", flag="--max-cost",
            metavar="USD", zero_is_none=True, gt=0),
    Setting("max_tokens_per_turn", int, 0, "stop a turn before a model call that could take its tokens (input + "
            "output) over N: a cap for models without a price (0 = no cap)", flag="--max-tokens-total",
            metavar="N", zero_is_none=True, ge=1),
    Setting("max_cost_per_session", float, 0.0, "stop before a model call that could take the session's cost (all "
            "its turns, in every kernel) over USD (0 = no cap)", zero_is_none=True, gt=0),
    Setting("auto_compact", bool, True, "compact the history when a request reaches the critical level"),
    Setting("max_tools", int, 5, "offer the N tools most relevant to the prompt; find_tools loads the others when "
            "the model asks (0 = offer every tool)", ge=0),
    Setting("top_k", int, 0, "put the N workspace passages (files, notebooks) most relevant to the prompt into "
            "the turn's context pack (0 = none)", flag="--top-k", metavar="N", ge=0, le=50),
    Setting("citations", bool, False, "end the answer with its sources (workspace anchors, web pages)",
            flag="--citations", off_flag="--no-citations", off_help="no Sources section (default)"),
    Setting("skill", str, None, "add a skill's instructions to the turn: NAME.md from .jupyter_brain/skills/ "
            "or ./skills/ (%agent skills lists them)", flag="--skill", metavar="NAME", nullable=True),
    Setting("web", str, "off", "web search for the turn: on uses the provider's own (Anthropic), else the "
            "function given to @jupyter_brain.web_search", choices=WEB_CHOICES, flag="--web"),
    Setting("memory", str, "off", "episodic memory of this folder: off, manual (recall what %agent remember "
            "saved), auto (also keep durable facts the model names after each turn)", choices=MEMORY_CHOICES),
    Setting("data_dir", str, ".jupyter_brain", "where the event log and artifacts live", agent_config=False),
    Setting("approval_timeout", float, 300.0, "seconds an approval card waits before it counts as deny",
            agent_config=False),
    Setting("fold", str, "auto", "fold a finished turn's steps under one summary line below its answer "
            "(never: keep them open)", choices=FOLD_CHOICES, agent_config=False),
    Setting("workspace_tokens", int, 2000, "token budget of the workspace context sent with each request (0 = none)",
            agent_config=False),
    Setting("workspace_dir", str, "", "the folder whose files the workspace context lists (default: the working "
            "directory; a relative path starts there)", agent_config=False),
    Setting("runtime", str, "full", "the runtime message of each request: full (which model answers, today's date, "
            "the kernel's Python, the working directory's full path), model (only which model answers and the working "
            "folder's name: the same on every machine and day), off (none; the folder's name)",
            choices=RUNTIME_CHOICES, agent_config=False),
    Setting("engine", str, "builtin", "who runs the turn: builtin (this harness), or an outside agent over ACP: "
            "claude-code, codex, gemini, or a name AgentMagics.engines adds", flag="--engine", metavar="NAME"),
    Setting("engines", dict, {}, "outside agents over ACP by name, a command line each (adds to claude-code, codex, "
            "gemini; e.g. {'mine': 'my-agent --acp'})", agent_config=False),
    Setting("replay", str, "auto", "answer from the cell's recording while its requests match, then live (auto); "
            "always live (off); stop where the recording no longer matches (strict). JUPYTER_BRAIN_REPLAY in the "
            "environment sets the default of every kernel", choices=REPLAY_CHOICES, flag="--replay",
            env="JUPYTER_BRAIN_REPLAY"),
    Setting("notebook", str, "", "the notebook file whose saved recordings replay (default: the kernel's own, "
            "found from VS Code or jupyter-server; else the working directory's notebooks)", agent_config=False),
    Setting("check_timeout", float, 5.0, "seconds a %%compare --check expression may take; one that takes longer "
            "fails as timed out (--check-timeout S for one cell)", gt=0, agent_config=False),
    Setting("compare_copy_limit_mb", float, 512.0, "%%compare copies your variables for each run; one bigger than "
            "this many MB is shared with the runs read-only instead, with a warning naming it (0: always copy)",
            ge=0, agent_config=False),
    Setting("agents_md", bool, True, "send the nearest AGENTS.md (the notebook's folder up to the repository root or "
            "home; at most 8 KB, the rest cut) with every request as project instructions (%agent context shows which)",
            agent_config=False),
    Setting("fail_on", str, "error,timeout,budget,max_steps,interrupted", "the turn statuses that fail a %%agent "
            "cell with a one-line error, so Run All stops there and nbconvert / papermill exit non-zero "
            "(comma-separated; none: never)", agent_config=False),
)}

#: The keys of ``%agent config`` (and the fields of ``AgentOptions``), in order.
CONFIG_KEYS: tuple[str, ...] = tuple(name for name, s in SETTINGS.items() if s.agent_config)


def setting_trait(name: str) -> TraitType:
    """The configurable traitlet of a setting, for ``AgentMagics``."""
    s = SETTINGS[name]
    default = s.initial()
    trait: TraitType
    if callable(s.choices):
        trait = _LazyCaselessStrEnum(s.choices, default_value=default, help=s.help)
    elif s.choices:
        trait = CaselessStrEnum(s.choices, default_value=default, help=s.help)
    elif s.type is dict:
        trait = Dict(value_trait=Unicode(), default_value=dict(s.default), help=s.help)
    elif s.type is bool:
        trait = Bool(default, help=s.help)
    elif s.type is int:
        trait = Int(default, help=s.help)
    elif s.type is float:
        trait = Float(default, help=s.help)
    elif s.nullable:
        trait = Unicode(default, allow_none=True, help=s.help)
    else:
        trait = Unicode(default, help=s.help)
    return trait.tag(config=True)


class _LazyCaselessStrEnum(CaselessStrEnum):
    """A CaselessStrEnum whose values come from a function, called when first needed."""

    def __init__(self, choices: Callable[[], tuple[str, ...]], **kwargs: Any) -> None:
        self._choices = choices
        super().__init__(None, **kwargs)

    @property
    def values(self) -> tuple[str, ...]:
        return self._choices()

    @values.setter
    def values(self, _: Any) -> None:  # Enum.__init__ assigns it; the function decides
        pass
