"""The extension's entry point: ``AgentMagics`` registers ``%%agent``, ``%agent`` and ``%%compare``.

The class holds the kernel's defaults (traitlets built from ``jupyter_brain.settings``,
so ``%config AgentMagics.think = "medium"`` works) and the kernel-held state (the
sessions, the checkpoint store). What a cell or a subcommand does is in
``jupyter_brain.notebook``; the magic methods only delegate.

Loading this module must stay fast: the agent core, pydantic and the widgets load with
the first cell, not with ``%load_ext``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.magic import Magics, cell_magic, line_cell_magic, magics_class

from .notebook.cell_errors import CellErrors
from .notebook.lab_channel import LabChannel
from .notebook.parsers import build_compare_parser, build_parser
from .notebook.provider_cache import ProviderCache
from .notebook.user_tools import USER_TOOLS
from .settings import COMPACTION_CHOICES, CONFIG_KEYS, PERMISSION_CHOICES, THINK_CHOICES, setting_trait

if TYPE_CHECKING:
    from .agent.checkpoints import CheckpointStore
    from .session import SessionManager

# Re-exported for code that imported them from here; PARSER, COMPARE_PARSER,
# STRATEGY_CHOICES and SUBCOMMANDS come from ``__getattr__`` below.
__all__ = ["COMPACTION_CHOICES", "PERMISSION_CHOICES", "THINK_CHOICES", "USER_TOOLS", "AgentMagics",
           "build_compare_parser", "build_parser"]

@magics_class
class AgentMagics(Magics):
    """Kernel defaults (also settable as ``%config AgentMagics.<name> = ...``)."""

    provider = setting_trait("provider")
    model = setting_trait("model")
    think = setting_trait("think")
    reflect_every = setting_trait("reflect_every")
    strategy = setting_trait("strategy")
    max_steps = setting_trait("max_steps")
    timeout = setting_trait("timeout")
    permission = setting_trait("permission")
    stream = setting_trait("stream")
    compaction = setting_trait("compaction")
    context_budget = setting_trait("context_budget")
    thinking_phase = setting_trait("thinking_phase")
    cells = setting_trait("cells")
    max_cost_per_turn = setting_trait("max_cost_per_turn")  # --max-cost (agent/cost_caps)
    max_tokens_per_turn = setting_trait("max_tokens_per_turn")  # --max-tokens-total
    max_cost_per_session = setting_trait("max_cost_per_session")
    auto_compact = setting_trait("auto_compact")
    max_tools = setting_trait("max_tools")
    top_k = setting_trait("top_k")
    citations = setting_trait("citations")
    skill = setting_trait("skill")
    web = setting_trait("web")
    memory = setting_trait("memory")
    data_dir = setting_trait("data_dir")
    approval_timeout = setting_trait("approval_timeout")
    fold = setting_trait("fold")
    workspace_tokens = setting_trait("workspace_tokens")
    workspace_dir = setting_trait("workspace_dir")
    runtime = setting_trait("runtime")
    replay = setting_trait("replay")
    engine = setting_trait("engine")  # %%agent --engine (notebook/engine_cell.py, jupyter_brain/engines)
    engines = setting_trait("engines")  # name → command line of more ACP agents
    notebook = setting_trait("notebook")
    agents_md = setting_trait("agents_md")  # AGENTS.md and Agent Skills (jupyter_brain/conventions)
    fail_on = setting_trait("fail_on")  # statuses that fail a cell (notebook/turn_failure.py)
    check_timeout = setting_trait("check_timeout")  # %%compare --check's time limit (evals/bounded_eval.py)
    compare_copy_limit_mb = setting_trait("compare_copy_limit_mb")  # %%compare: bigger variables shared, not copied

    _CONFIG_KEYS = CONFIG_KEYS  # the keys of `%agent config`

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self._manager: SessionManager | None = None
        self._checkpoints: CheckpointStore | None = None
        self._checkpoints_folder: Path | None = None
        self.cell_errors = CellErrors()  # failing cells, for %agent fix (a post_run_cell hook)
        self.last_fix: Any = None  # the fix %agent fix proposed last (--apply inserts it)
        self.lab = LabChannel(self)  # the JupyterLab extension's comm; started by %load_ext
        self.hooks: dict[str, Any] = {}  # the user's hooks for every %%agent cell (%agent hooks add NAME)
        self.provider_cache = ProviderCache()  # providers by name kept across cells (one client, one connection)
        self.governance: Any = None  # the admin's policy (notebook/governance.py), read at %load_ext

    @property
    def manager(self) -> SessionManager:
        """The kernel's sessions; a changed ``data_dir`` switches to that folder's log."""
        if self._manager is not None and self._manager.data_dir != Path(self.data_dir):
            self._manager.event_log.close()
            self._manager = None
        if self._manager is None:
            from .notebook.notebook_session import kernel_session
            from .session import SessionManager

            # A fresh session named after the notebook, not the last run's (notebook_session.py).
            self._manager = SessionManager(self.data_dir, first_session=kernel_session(self.shell))
        return self._manager

    def checkpoint_store(self) -> CheckpointStore:
        """The kernel's one CheckpointStore, in ``<data_dir>/checkpoints/`` (follows data_dir)."""
        from .agent.checkpoints import CheckpointStore

        folder = self.manager.data_dir / "checkpoints"
        store = self._checkpoints
        if store is None or self._checkpoints_folder != folder:
            if store is not None:
                store.close()
            store = self._checkpoints = CheckpointStore(folder)
            self._checkpoints_folder = folder
        return store

    def defaults(self) -> dict[str, Any]:
        """The kernel defaults a cell's flags overlay, in ``%agent config`` order."""
        return {key: getattr(self, key) for key in CONFIG_KEYS}

    @line_cell_magic
    def agent(self, line: str = "", cell: str | None = None) -> Any:
        """%%agent [flags] + prompt runs a turn; %agent SUBCOMMAND manages sessions;
        %agent --mcp-prompt SERVER:NAME [flags] runs a turn from a server's prompt alone
        (IPython refuses a %%agent cell with an empty body)."""
        if cell is None and line.lstrip().startswith("-"):
            cell = ""
        if cell is None:
            from .notebook.subcommands import run_subcommand

            return run_subcommand(self, line)
        from .notebook import warm_up

        release = warm_up.hold()  # the warm-up's later work waits for this turn's first word (#40)
        try:
            from .notebook.agent_cell import run_agent_cell

            return run_agent_cell(self, line, cell, first_word=release)
        finally:
            release()

    @cell_magic
    def compare(self, line: str = "", cell: str = "") -> None:
        """%%compare --strategies react,cot,... runs the prompt under each strategy at once."""
        from .notebook.compare_cell import run_compare_cell

        return run_compare_cell(self, line, cell)


def __getattr__(name: str) -> Any:
    """``PARSER``, ``COMPARE_PARSER``, ``STRATEGY_CHOICES``, ``SUBCOMMANDS``: built on first
    use (the strategy names are not loaded with the extension)."""
    from .notebook import parsers
    from .settings import strategy_choices

    lazy = {
        "PARSER": parsers.agent_parser,
        "COMPARE_PARSER": parsers.compare_parser,
        "STRATEGY_CHOICES": strategy_choices,
        "COMPARE_STRATEGIES": strategy_choices,
    }
    if name in lazy:
        return lazy[name]()
    if name == "SUBCOMMANDS":
        from .notebook.subcommands import SUBCOMMANDS

        return SUBCOMMANDS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
