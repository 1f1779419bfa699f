"""``%%agent`` cells and ``%agent`` subcommands.

The magic parses flags (argparse, with errors turned into short usage messages),
resolves the provider, builds the turn's harness from the session, shows a view
*before* streaming into it, and stores the ``TurnResult`` in ``_agent`` (and ``--out``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_cell_magic, magics_class
from traitlets import Bool, CaselessStrEnum, Float, Int, Unicode

from .interpolate import interpolate

if TYPE_CHECKING:  # the agent core (and pydantic) load on the first turn, not with the extension
    from .agent.tools import ToolSpec
    from .providers.base import LLMProvider
    from .session import AgentOptions, SessionManager

STRATEGY_CHOICES = ("react", "reflexion", "cot", "tot", "none")
THINK_CHOICES = ("off", "low", "medium", "high")
PERMISSION_CHOICES = ("read-only", "ask", "auto")
COMPACTION_CHOICES = ("summary", "token_budget", "semantic")

# User tools registered with @jupyter_brain.tool, offered in every session of the kernel.
USER_TOOLS: dict[str, ToolSpec] = {}

SUBCOMMANDS = {
    "status": "the current session, its settings and context use",
    "context": "the last request's tokens against the context budget, and the history's size",
    "sessions": "list sessions (this kernel's and the event log's)",
    "new [NAME]": "start a new session and make it current",
    "use NAME": "switch to a session (reopens it from the event log after a restart)",
    "reset": "clear the current session's history",
    "history [N]": "the last N messages of the current session",
    "tools": "the tools the agent can use, with their permission",
    "allow TOOL / deny TOOL": "always allow / never allow a tool in this session",
    "cost": "tokens and cost per turn and in total",
    "log [N]": "the last N events of the current session",
    "replay [TURN]": "re-render a past turn (number or id) from the event log",
    "compare-history": "past %%compare runs and the winner marked for each",
    "compare-best STRATEGY [N]": "record STRATEGY as the winner of comparison N (default: the latest)",
    "checkpoints [--session NAME] [--limit N]": "files the agent wrote, as they were before each write",
    "undo [--session NAME] [--force]": "put back the files of the session's last turn with writes",
    "config [KEY=VALUE ...]": "show or set this kernel's defaults (provider, model, think, ...)",
    "help": "this help",
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as IPython UsageErrors instead of exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"%%agent: {message}\n{self.format_usage().strip()}")

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        if message:
            raise UsageError(message)
        raise UsageError(self.format_help())


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _lower(text: str) -> str:
    return text.strip().lower()


def build_parser() -> _Parser:
    p = _Parser(prog="%%agent", add_help=False, description="Run one agent turn on the cell's prompt.")
    p.add_argument("--think", type=_lower, choices=THINK_CHOICES, help="thinking depth")
    p.add_argument("--reflect-every", type=_non_negative_int, metavar="N", help="reflect every N steps (0 = never)")
    p.add_argument("--strategy", type=_lower, choices=STRATEGY_CHOICES, help="reasoning strategy")
    p.add_argument("--max-steps", type=_positive_int, metavar="N", help="model calls allowed in the turn")
    p.add_argument("--timeout", type=_positive_float, metavar="S", help="seconds allowed for the turn")
    p.add_argument("--provider", metavar="P", help="anthropic, openai, ollama, vllm, scripted, auto, or a variable holding a provider")
    p.add_argument("--model", metavar="M", help="model id")
    p.add_argument("--session", metavar="NAME", help="session to run in (created if new)")
    p.add_argument("--new", action="store_true", help="start a fresh session first")
    p.add_argument("--permission", type=_lower, choices=PERMISSION_CHOICES, help="what tools may do")
    stream = p.add_mutually_exclusive_group()
    stream.add_argument("--no-stream", dest="stream", action="store_false", default=None, help="wait for whole answers")
    stream.add_argument("--stream", dest="stream", action="store_true", help="stream answers (default)")
    p.add_argument("--compaction", type=_lower, choices=COMPACTION_CHOICES,
                   help="how history is shortened at the critical context level")
    p.add_argument("--context-budget", type=_positive_int, metavar="TOKENS",
                   help="keep requests under this many tokens (default: the model's window)")
    p.add_argument("--out", metavar="VAR", help="also store the TurnResult in this variable")
    p.add_argument("-h", "--help", action="store_true", help="show this help")
    return p


PARSER = build_parser()

COMPARE_STRATEGIES = ("react", "reflexion", "cot", "tot", "none")


class _CompareParser(_Parser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"%%compare: {message}\n{self.format_usage().strip()}")


def _strategy_list(text: str) -> list[str]:
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in COMPARE_STRATEGIES]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"unknown strategy {', '.join(map(repr, bad)) or '(none given)'}; choose from {', '.join(COMPARE_STRATEGIES)}")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"a strategy is listed twice: {text}")
    return names


def build_compare_parser() -> _CompareParser:
    p = _CompareParser(prog="%%compare", add_help=False,
                       description="Run the cell's prompt under several strategies at once and compare them.")
    p.add_argument("--strategies", type=_strategy_list, default=["react", "reflexion", "cot", "tot"],
                   metavar="S1,S2,...", help="strategies to compare (default react,reflexion,cot,tot)")
    p.add_argument("--think", type=_lower, choices=THINK_CHOICES, help="thinking depth")
    p.add_argument("--reflect-every", type=_non_negative_int, metavar="N", help="reflect every N steps")
    p.add_argument("--provider", metavar="P", help="a provider name, a variable holding a provider, "
                   "or a variable holding a dict strategy -> provider")
    p.add_argument("--model", metavar="M", help="model id")
    p.add_argument("--runs", type=_positive_int, default=1, metavar="K", help="runs per strategy (mean and spread)")
    p.add_argument("--permission", type=_lower, choices=("read-only", "auto"), default="read-only",
                   help="what tools may do (default read-only; nobody can answer 'ask' prompts of parallel runs)")
    p.add_argument("--max-steps", type=_positive_int, metavar="N", help="model calls allowed per run")
    p.add_argument("--timeout", type=_positive_float, metavar="S", help="seconds allowed per run")
    p.add_argument("--out", metavar="VAR", help="also store the CompareResult in this variable")
    p.add_argument("-h", "--help", action="store_true", help="show this help")
    return p


COMPARE_PARSER = build_compare_parser()


@magics_class
class AgentMagics(Magics):
    """Kernel defaults (also settable as ``%config AgentMagics.<name> = ...``)."""

    provider = Unicode("auto", help="default provider name or variable").tag(config=True)
    model = Unicode(None, allow_none=True, help="default model id").tag(config=True)
    think = CaselessStrEnum(THINK_CHOICES, default_value="off").tag(config=True)
    reflect_every = Int(0, help="reflect every N steps").tag(config=True)
    strategy = CaselessStrEnum(STRATEGY_CHOICES, default_value="none").tag(config=True)
    max_steps = Int(6).tag(config=True)
    timeout = Float(120.0).tag(config=True)
    permission = CaselessStrEnum(PERMISSION_CHOICES, default_value="ask").tag(config=True)
    stream = Bool(True).tag(config=True)
    compaction = CaselessStrEnum(COMPACTION_CHOICES, default_value="summary",
                                 help="history compaction strategy at the critical context level").tag(config=True)
    context_budget = Int(0, help="request token budget (0 = the model's context window)").tag(config=True)
    auto_compact = Bool(True, help="compact the history when a request reaches the critical level").tag(config=True)
    max_tools = Int(0, help="offer only the N tools most relevant to the prompt (0 = all)").tag(config=True)
    data_dir = Unicode(".jupyter_brain", help="where the event log and artifacts live").tag(config=True)
    approval_timeout = Float(300.0, help="seconds an approval card waits before it counts as deny").tag(config=True)
    workspace_tokens = Int(2000, help="token budget of the workspace context sent with each request (0 = none)").tag(config=True)

    _CONFIG_KEYS = ("provider", "model", "think", "reflect_every", "strategy", "max_steps", "timeout",
                    "permission", "stream", "compaction", "context_budget", "auto_compact", "max_tools")

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self._manager: SessionManager | None = None

    @property
    def manager(self) -> SessionManager:
        """The kernel's sessions; a changed ``data_dir`` switches to that folder's log."""
        from pathlib import Path

        if self._manager is not None and self._manager.data_dir != Path(self.data_dir):
            self._manager.event_log.close()
            self._manager = None
        if self._manager is None:
            from .session import SessionManager

            self._manager = SessionManager(self.data_dir)
        return self._manager

    # entry point ---------------------------------------------------------------------
    @line_cell_magic
    def agent(self, line: str = "", cell: str | None = None) -> Any:
        """%%agent [flags] + prompt runs a turn; %agent SUBCOMMAND manages sessions."""
        if cell is None:
            return self._subcommand(line)
        return self._turn(line, cell)

    # a turn --------------------------------------------------------------------------
    def defaults(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in self._CONFIG_KEYS}

    def options_for(self, args: argparse.Namespace) -> AgentOptions:
        from pydantic import ValidationError

        from .session import AgentOptions

        values = self.defaults()
        for key in self._CONFIG_KEYS:
            flag = getattr(args, key, None)
            if flag is not None:
                values[key] = flag
        try:
            return AgentOptions(**values)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise UsageError(f"%%agent: invalid setting: {problems}") from None

    def _turn(self, line: str, cell: str) -> None:
        try:
            argv = shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"%%agent: cannot parse the flags: {exc}") from None
        args = PARSER.parse_args(argv)
        if args.help:
            print(PARSER.format_help())
            return None
        prompt = cell.strip()
        if not prompt:
            raise UsageError("%%agent: write the prompt in the cell body, below the %%agent line")
        options = self.options_for(args)
        if options.reflect_every and options.think == "off":
            print("note: --reflect-every needs a think level; no reflection at --think off "
                  "(use --think low, medium or high).")
        manager = self.manager
        try:
            if args.new:
                session = manager.new(args.session)
            elif args.session:
                session = manager.use(args.session)
            else:
                session = manager.current
        except ValueError as exc:
            raise UsageError(f"%%agent: {exc}") from None
        provider = self._provider(options)
        user_ns = self.shell.user_ns if self.shell is not None else {}
        prompt = interpolate(prompt, user_ns)
        view = self._view()
        try:
            harness = session.build_harness(
                provider,
                self._tools(user_ns, self._checkpoint_store()),
                options,
                approver=self._approver(view),
                workspace=self._workspace(user_ns),
                working_directory=os.getcwd(),
                secrets=tuple(s for s in (getattr(provider, "api_key", None),) if isinstance(s, str)),
                checkpoint_store=self._checkpoint_store(),
            )
            if harness.redactor is not None and hasattr(view, "redact"):
                view.redact = harness.redactor  # also masks the configured keys' values
            result = session.run(prompt, harness, on_event=view.handle)
        finally:
            _close_view(view)
        user_ns["_agent"] = result
        if args.out:
            if not args.out.isidentifier():
                raise UsageError(f"%%agent: --out needs a variable name, got {args.out!r}")
            user_ns[args.out] = result
        return None

    # a comparison ---------------------------------------------------------------------
    @cell_magic
    def compare(self, line: str = "", cell: str = "") -> None:
        """%%compare --strategies react,cot,... runs the prompt under each strategy at once."""
        from .compare import run_comparison

        try:
            args = COMPARE_PARSER.parse_args(shlex.split(line))
        except ValueError as exc:
            raise UsageError(f"%%compare: cannot parse the flags: {exc}") from None
        if args.help:
            print(COMPARE_PARSER.format_help())
            return None
        if args.out is not None and not args.out.isidentifier():
            raise UsageError(f"%%compare: --out needs a variable name, got {args.out!r}")
        if not cell.strip():
            raise UsageError("%%compare: write the prompt in the cell body, below the %%compare line")
        options = self.options_for(args)
        factory = self._compare_providers(options, args.strategies)
        user_ns = self.shell.user_ns if self.shell is not None else {}
        prompt = interpolate(cell.strip(), user_ns)
        view = self._compare_view(args.strategies, args.runs, prompt)
        event_log = self.manager.event_log
        try:
            result = run_comparison(
                # Concurrent throw-away runs: their writes are not checkpointed (no undo).
                prompt, args.strategies, factory, lambda: self._tools(user_ns, lambda: None), options,
                runs=args.runs, event_log=event_log, on_event=view.handle, on_run_end=view.run_finished,
                workspace=self._workspace(user_ns), working_directory=os.getcwd(),
            )
            view.bind(result.comparison_id, event_log)
        finally:
            _close_view(view)
        user_ns["_compare"] = result
        if args.out:
            user_ns[args.out] = result
        return None

    def _compare_providers(self, options: AgentOptions, strategies: list[str]):
        """``(strategy, run) -> provider``: a dict variable maps strategies to providers
        (instances or names); otherwise one provider for all. Names are built anew for
        every run, ScriptedProviders cloned per run, other instances shared (see
        jupyter_brain.compare). Every choice is checked here, before any run starts."""
        from .compare import clone_provider
        from .providers.base import LLMProvider

        user_ns = self.shell.user_ns if self.shell is not None else {}
        name = options.provider
        mapping = user_ns.get(name) if name.isidentifier() else None
        if isinstance(mapping, dict):
            missing = [s for s in strategies if s not in mapping]
            if missing:
                raise UsageError(f"%%compare: {name!r} has no provider for {', '.join(missing)} "
                                 f"(its keys: {', '.join(map(str, mapping))})")
            chosen: dict[str, Any] = {s: mapping[s] for s in strategies}
            for s, p in chosen.items():
                if not isinstance(p, str):
                    self._check_provider(p, f"{name}[{s!r}]")
        else:
            chosen = {s: mapping if isinstance(mapping, LLMProvider) else name for s in strategies}

        def build(choice: Any) -> LLMProvider:
            if not isinstance(choice, str):
                return clone_provider(choice)
            try:
                return self._provider(options.model_copy(update={"provider": choice}))
            except UsageError as exc:
                raise UsageError(str(exc).replace("%%agent:", "%%compare:", 1)) from None

        for choice in {c for c in chosen.values() if isinstance(c, str)}:
            build(choice)  # a bad name fails the cell now, not each run

        def factory(strategy: str, run: int) -> LLMProvider:
            return build(chosen[strategy])

        return factory

    @staticmethod
    def _check_provider(candidate: Any, label: str) -> None:
        from .providers.base import LLMProvider

        if not isinstance(candidate, LLMProvider):
            raise UsageError(f"%%compare: {label} is a {type(candidate).__name__}, not an LLM provider")

    def _compare_view(self, strategies: list[str], runs: int, prompt: str):
        """The CompareView widget in a kernel with a front-end; a text table elsewhere."""
        from IPython.display import display

        from .widgets.compare_text import CompareTextView

        if getattr(self.shell, "kernel", None) is not None:
            try:
                from .widgets import CompareView

                view = CompareView(strategies, runs, prompt)
                view.display_handle = display(view, display_id=True)
                return view
            except Exception as exc:  # noqa: BLE001 - e.g. the JS bundle is missing
                print(f"(widget unavailable: {exc}; showing plain text)", file=sys.stderr)
        return CompareTextView(sys.stdout, strategies)

    def _provider(self, options: AgentOptions) -> LLMProvider:
        from .providers.base import LLMProvider, ProviderError

        name = options.provider
        user_ns = self.shell.user_ns if self.shell is not None else {}
        candidate = user_ns.get(name) if name.isidentifier() else None
        if isinstance(candidate, str):  # a variable holding a provider name, e.g. "auto"
            name, candidate = candidate, None
        if candidate is not None:
            if isinstance(candidate, LLMProvider):
                return candidate
            raise UsageError(f"%%agent: variable {name!r} is a {type(candidate).__name__}, not an LLM provider")
        from .providers.registry import get_provider

        try:
            return get_provider(name, options.model)
        except ValueError as exc:
            raise UsageError(f"%%agent: {exc} (or the name of a variable holding a provider)") from None
        except ProviderError as exc:
            raise UsageError(f"%%agent: {exc.message}") from None

    def _tools(self, user_ns: dict[str, Any], checkpoint_store: Any = None) -> list[ToolSpec]:
        """The built-in tools plus ``@agent_tool`` ones; file writes snapshot into
        ``checkpoint_store`` (a store, or a callable giving one or None for no undo)."""
        from .tools import default_tools

        return [*default_tools(user_ns, os.getcwd(), checkpoint_store=checkpoint_store), *USER_TOOLS.values()]

    def _approver(self, view: Any):
        """The AgentView's approval card; stdin where no widget front-end answers."""
        from .approval import NotebookApprover

        if self.approval_timeout <= 0:
            raise UsageError("AgentMagics.approval_timeout must be a positive number of seconds")
        return NotebookApprover(view if hasattr(view, "decision_for") else None, timeout_s=self.approval_timeout)

    def _workspace(self, user_ns: dict[str, Any]):
        """Variables, files and recent cells, rendered fresh for each request (never stored)."""
        if self.workspace_tokens <= 0:
            return None
        from .tools.workspace_context import notebook_workspace

        return notebook_workspace(user_ns, os.getcwd(), budget_tokens=self.workspace_tokens)

    def _view(self):
        """The live widget in a kernel with a front-end; plain text elsewhere."""
        from IPython.display import display

        from .widgets import TextView

        kernel = getattr(self.shell, "kernel", None)
        if kernel is not None:
            try:
                from .widgets import AgentView

                from .kernel_channel import route_to_subshell

                view = AgentView()
                # Approval clicks must reach the kernel while this cell still runs.
                view.messages_routed = route_to_subshell(view)
                # A display id, so the finished turn can add its Markdown transcript.
                view.display_handle = display(view, display_id=True)
                return view
            except Exception as exc:  # noqa: BLE001 - e.g. the JS bundle is missing
                print(f"(widget unavailable: {exc}; showing plain text)", file=sys.stderr)
        return TextView(sys.stdout)

    # subcommands ---------------------------------------------------------------------
    def _subcommand(self, line: str) -> Any:
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"%agent: {exc}") from None
        if not words:
            words = ["help"]
        command, rest = words[0].lower(), words[1:]
        handler = getattr(self, f"_cmd_{command.replace('-', '_')}", None)
        if handler is None:
            names = ", ".join([*(s.split()[0] for s in SUBCOMMANDS), "deny"])
            raise UsageError(f"%agent: unknown subcommand {command!r}; choose one of: {names}")
        return handler(rest)

    def _cmd_help(self, rest: list[str]) -> None:
        width = max(len(k) for k in SUBCOMMANDS)
        print("%agent SUBCOMMAND\n")
        for key, text in SUBCOMMANDS.items():
            print(f"  %agent {key:<{width}}  {text}")
        print()
        print(PARSER.format_help())

    def _cmd_status(self, rest: list[str]) -> None:
        session = self.manager.current
        summary = session.cost_tracker.summary()
        print(f"session: {session.name}")
        print(f"turns: {len(session.turns())}    messages in history: {len(session.history)}")
        print("defaults: " + "  ".join(f"{k}={v}" for k, v in self.defaults().items()))
        print(f"tokens this kernel: in {summary['input_tokens']:,}  out {summary['output_tokens']:,}  "
              f"cache read {summary['cache_read_tokens']:,}  cache write {summary['cache_creation_tokens']:,}")
        for line in self._context_lines(session):
            print(line)
        print(f"event log: {self.manager.event_log.path}")

    def _cmd_context(self, rest: list[str]) -> None:
        for line in self._context_lines(self.manager.current):
            print(line)

    def _context_lines(self, session: Any) -> list[str]:
        """Context usage against the window: the last request, and the history as it is now."""
        from .agent.context import TokenCounter, context_window_for

        harness = session.last_harness
        history_tokens = TokenCounter().count_messages(session.history)
        if harness is None:
            budget = self.context_budget or context_window_for(self.model)
            return [f"context: no request yet in this kernel; history ≈ {history_tokens:,} tokens "
                    f"of a {budget:,}-token budget"]
        ctx = harness.context
        window = (f" (model window {harness.context_window:,})"
                  if harness.context_window != harness.context_budget else "")
        compact = (f"compacts ({harness.compaction.name}) at {ctx.critical_tokens:,}"
                   if harness.auto_compact else "auto-compaction off")
        return [
            f"context: last request {ctx.last_tokens:,} tokens = {ctx.ratio:.0%} of the "
            f"{harness.context_budget:,}-token budget{window} · level {ctx.level}",
            f"  warning at {ctx.warning_tokens:,} · {compact} · {harness.compactions} compaction"
            f"{'s' * (harness.compactions != 1)} in the last turn",
            f"  history now: {len(session.history)} messages ≈ {history_tokens:,} tokens",
        ]

    def _cmd_sessions(self, rest: list[str]) -> None:
        manager = self.manager
        for name in manager.known():
            turns = len(manager.event_log.turns(name))
            mark = "*" if name == manager.current.name else " "
            print(f"{mark} {name}  ({turns} turn{'s' * (turns != 1)})")

    def _cmd_new(self, rest: list[str]) -> None:
        try:
            session = self.manager.new(rest[0] if rest else None)
        except ValueError as exc:
            raise UsageError(f"%agent new: {exc}") from None
        print(f"new session: {session.name}")

    def _cmd_use(self, rest: list[str]) -> None:
        if len(rest) != 1:
            raise UsageError("%agent use NAME: give exactly one session name")
        try:
            session = self.manager.use(rest[0])
        except ValueError as exc:
            raise UsageError(f"%agent use: {exc}") from None
        print(f"session: {session.name} ({len(session.history)} messages in history)")

    def _cmd_reset(self, rest: list[str]) -> None:
        session = self.manager.current
        session.reset()
        print(f"session {session.name}: history cleared")

    def _cmd_history(self, rest: list[str]) -> None:
        count = _count_arg(rest, "history", default=20)
        session = self.manager.current
        messages = session.history[-count:]
        if not messages:
            print(f"session {session.name}: no history yet")
        for msg in messages:
            print(_message_line(msg))

    def _cmd_tools(self, rest: list[str]) -> None:
        from .agent.artifacts import artifact_tool
        from .agent.tools import AgentToolRegistry

        session = self.manager.current
        registry = AgentToolRegistry(self._tools(self.shell.user_ns), permission_mode=self.permission)
        registry.register(artifact_tool(session.artifacts))
        for name, rule in session.overrides.items():
            (registry.allow if rule == "allow" else registry.deny)(name)
        print(f"permission mode: {registry.permission_mode.value}")
        for spec in registry:
            first = spec.description.splitlines()[0] if spec.description else ""
            print(f"  {spec.name:<16} {spec.effect:<8} {registry.permission_for(spec.name):<6} {first}")

    def _cmd_allow(self, rest: list[str]) -> None:
        self._override(rest, "allow")

    def _cmd_deny(self, rest: list[str]) -> None:
        self._override(rest, "deny")

    def _override(self, rest: list[str], rule: str) -> None:
        if len(rest) != 1:
            raise UsageError(f"%agent {rule} TOOL: give exactly one tool name")
        session = self.manager.current
        session.overrides[rest[0]] = rule
        print(f"session {session.name}: {rest[0]} is now {'always allowed' if rule == 'allow' else 'denied'}")

    def _cmd_cost(self, rest: list[str]) -> None:
        session = self.manager.current
        tracker = session.cost_tracker
        if not tracker.turns:
            print(f"session {session.name}: no turns in this kernel yet")
            return
        for i, turn in enumerate(tracker.turns, 1):
            u = turn.usage
            cost = "price unknown" if turn.cost_usd is None else f"${turn.cost_usd:.4f}"
            print(f"turn {i}: in {u.input_tokens:,}  out {u.output_tokens:,}  cache read {u.cache_read_tokens:,}  "
                  f"cache write {u.cache_creation_tokens:,}  {cost}  ({turn.model or '?'})")
        total = tracker.total_cost_usd
        print(f"total: {'price unknown' if total is None else f'${total:.4f}'}")

    def _cmd_log(self, rest: list[str]) -> None:
        count = _count_arg(rest, "log", default=30)
        session = self.manager.current
        events = self.manager.event_log.events(session_id=session.name)[-count:]
        if not events:
            print(f"session {session.name}: no events yet")
        for e in events:
            print(_event_line(e))

    def _cmd_replay(self, rest: list[str]) -> None:
        session = self.manager.current
        turns = session.turns()
        if not turns:
            raise UsageError(f"%agent replay: session {session.name} has no turns yet")
        if not rest:
            record = turns[-1]
        else:
            key = rest[0]
            if key.isdigit() and 1 <= int(key) <= len(turns):
                record = turns[int(key) - 1]
            else:
                record = next((t for t in turns if t.turn_id == key), None)
                if record is None:
                    raise UsageError(f"%agent replay: no turn {key!r}; use 1-{len(turns)} or a turn id")
        events = self.manager.event_log.events(turn_id=record.turn_id)
        view = self._view()
        if hasattr(view, "replay"):
            view.replay(events)
        else:
            for event in events:
                view.handle(event)
        _close_view(view)

    def _cmd_compare_history(self, rest: list[str]) -> None:
        from .compare import comparison_history

        past = comparison_history(self.manager.event_log)
        if not past:
            print("no comparisons yet (run a %%compare cell)")
        for i, c in enumerate(past, 1):
            statuses = ", ".join(f"{r['strategy']}#{r['run']} {r['status']}" for r in c.get("rows", []))
            print(f"{i}. {_clip(c.get('prompt', ''), 60)}")
            print(f"   runs: {statuses}")
            print(f"   winner: {c['winner'] or '(not marked)'}")

    def _cmd_compare_best(self, rest: list[str]) -> None:
        """The "mark best" button's record, from code (scripts, headless runs)."""
        from .compare import comparison_history, record_decision

        past = comparison_history(self.manager.event_log)
        usage = "%agent compare-best STRATEGY [N]"
        if not rest or len(rest) > 2:
            raise UsageError(f"{usage}: give a strategy and optionally a comparison number")
        if not past:
            raise UsageError(f"{usage}: no comparisons yet (run a %%compare cell)")
        number = _count_arg(rest[1:], "compare-best", default=len(past))
        if number > len(past):
            raise UsageError(f"{usage}: no comparison {number}; use 1-{len(past)}")
        chosen = past[number - 1]
        strategy = rest[0].lower()
        if strategy not in chosen["strategies"]:
            raise UsageError(f"{usage}: comparison {number} ran {', '.join(chosen['strategies'])}, not {strategy!r}")
        record_decision(self.manager.event_log, chosen["comparison_id"], strategy, source="magic")
        print(f"comparison {number} ({_clip(chosen['prompt'], 40)}): winner {strategy}")

    def _checkpoint_store(self):
        """The kernel's one CheckpointStore, in ``<data_dir>/checkpoints/`` (follows data_dir)."""
        from .agent.checkpoints import CheckpointStore

        folder = self.manager.data_dir / "checkpoints"
        store = getattr(self, "_checkpoints", None)
        if store is None or getattr(self, "_checkpoints_folder", None) != folder:
            if store is not None:
                store.close()
            store = self._checkpoints = CheckpointStore(folder)
            self._checkpoints_folder = folder
        return store

    def _checkpoint_args(self, command: str, rest: list[str], *, limit: bool = False, force: bool = False):
        class _SubParser(_Parser):
            def error(self, message: str) -> None:  # type: ignore[override]
                raise UsageError(f"%agent {command}: {message}\n{self.format_usage().strip()}")

        parser = _SubParser(prog=f"%agent {command}", add_help=False)
        parser.add_argument("--session", metavar="NAME", help="session (default: the current one)")
        if limit:
            parser.add_argument("--limit", type=_positive_int, default=20, metavar="N", help="show at most N")
        if force:
            parser.add_argument("--force", action="store_true", help="also overwrite files changed since")
        return parser.parse_args(rest)

    def _cmd_checkpoints(self, rest: list[str]) -> None:
        """The files the agent changed, newest first, with what each was before."""
        from .agent.checkpoints import display_path
        from .tools.files import human_size

        args = self._checkpoint_args("checkpoints", rest, limit=True)
        name = args.session or self.manager.current.name
        found = self._checkpoint_store().list(session_id=name, limit=args.limit)
        if not found:
            print(f"No checkpoints yet (session {name}).")
            return
        numbers = {t.turn_id: i for i, t in enumerate(self.manager.event_log.turns(name), 1)}

        def size(n: int | None) -> str:
            return "-" if n is None else human_size(n)

        rows = [("time", "turn", "action", "size", "path")]
        for cp in found:
            turn = f"{numbers[cp.turn_id]} ({cp.turn_id[:6]})" if cp.turn_id in numbers else cp.turn_id[:12]
            action = cp.action + (" (undone)" if cp.undone else "")
            sizes = size(cp.after_size) if not cp.existed else f"{size(cp.size)} -> {size(cp.after_size)}"
            rows.append((cp.when, turn, action, sizes, display_path(cp.path, os.getcwd())))
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        print(f"Checkpoints of session {name} (newest first):")
        for row in rows:
            print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[4])

    def _cmd_undo(self, rest: list[str]) -> None:
        """Put back the files the session's last turn with writes changed."""
        args = self._checkpoint_args("undo", rest, force=True)
        name = args.session or self.manager.current.name
        report = self._checkpoint_store().undo_last_turn(name, force=args.force, root=os.getcwd())
        numbers = {t.turn_id: i for i, t in enumerate(self.manager.event_log.turns(name), 1)}
        if report.turn_id in numbers:
            report.turn_label = str(numbers[report.turn_id])  # "turn 3" reads better than an id
        print(report)

    def _cmd_config(self, rest: list[str]) -> None:
        if not rest:
            for key, value in self.defaults().items():
                print(f"{key} = {value!r}")
            return
        updates: dict[str, Any] = {}
        for item in rest:
            if "=" not in item:
                raise UsageError(f"%agent config: expected KEY=VALUE, got {item!r}")
            key, value = item.split("=", 1)
            key = key.strip().replace("-", "_")
            if key not in self._CONFIG_KEYS:
                raise UsageError(f"%agent config: unknown key {key!r}; keys: {', '.join(self._CONFIG_KEYS)}")
            updates[key] = value.strip()
        from pydantic import ValidationError

        from .session import AgentOptions

        merged = {**self.defaults(), **updates}
        if merged.get("model") in ("", "none", "None"):
            merged["model"] = None
        try:
            options = AgentOptions(**{k: (v.lower() in ("1", "true", "yes", "on") if k in ("stream", "auto_compact") and isinstance(v, str) else v)
                                      for k, v in merged.items()})
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise UsageError(f"%agent config: {problems}") from None
        for key in updates:
            setattr(self, key, getattr(options, key))
        print("  ".join(f"{k}={getattr(self, k)!r}" for k in updates))


def _close_view(view: Any) -> None:
    """Flush the widget's last batch and re-publish its output with the Markdown fallback.

    The text view has nothing to flush.
    """
    close = getattr(view, "close_stream", None)
    if close is not None:
        close()
    handle = getattr(view, "display_handle", None)
    if handle is not None:
        handle.update(view)


def _count_arg(rest: list[str], command: str, *, default: int) -> int:
    if not rest:
        return default
    if not rest[0].isdigit() or int(rest[0]) < 1:
        raise UsageError(f"%agent {command} [N]: N must be a positive number, got {rest[0]!r}")
    return int(rest[0])


def _clip(text: str, n: int = 100) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _message_line(msg: dict[str, Any]) -> str:
    role = msg.get("role", "?")
    if role == "tool":
        flag = " (error)" if msg.get("is_error") else ""
        return f"tool {msg.get('name', '?')}{flag}: {_clip(msg.get('content', ''))}"
    line = f"{role}: {_clip(msg.get('content', ''))}"
    for call in msg.get("tool_calls", []):
        line += f"\n  → {call['name']}({_clip(call.get('arguments'), 60)})"
    return line


def _event_line(e: Any) -> str:
    step = getattr(e, "step", None)
    head = f"[{e.turn_id[:6]}] {e.type}" + (f" step {step}" if step is not None else "")
    detail = ""
    if e.type in ("text_delta", "thinking_delta"):
        detail = _clip(e.text, 80)
    elif e.type in ("tool_call_start", "tool_call_args"):
        detail = e.name
    elif e.type == "tool_call_end":
        detail = f"{e.name} {e.status} {e.duration_ms:.0f} ms"
    elif e.type == "reflection":
        detail = f"{e.trigger}: {_clip(e.reflection, 70)}"
    elif e.type == "error":
        detail = f"{e.kind}: {_clip(e.message, 70)}"
    elif e.type == "turn_start":
        detail = _clip(e.user_message, 70)
    elif e.type == "turn_end":
        detail = f"{e.status}: {_clip(e.text, 60)}"
    elif e.type == "usage":
        detail = f"in {e.input_tokens} out {e.output_tokens}"
    return f"{head}  {detail}".rstrip()
