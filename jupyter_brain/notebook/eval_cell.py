"""``%agent eval FILE``: run an eval set in this kernel and return its rows as a DataFrame.

The task file (``evals/tasks.py``) and the flags decide the configs: ``--configs NAMES``
picks the file's own, ``--strategies a,b`` makes one per strategy, neither runs the file's
configs (or, when it names none, the kernel's current settings as ``default``). Each run's
namespace is a fresh copy of the user's (``evals.namespace``) with the task's setup run in
it, its tools bound to that copy; its provider replays the run's recording when it has one
(``eval_replay.py``). The runs themselves are ``evals/runner.py``; what is shown,
``eval_view.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from IPython.core.error import UsageError

from .compare_checks import KEPT_KERNEL_NAMES, UnavailableJudge, kernel_names
from .governance import govern_turn, governance_hooks, governed_provider
from .kernel_inputs import cell_tools, workspace_for
from .options import validated
from .parsers import COMPARE_PERMISSIONS, UsageParser, _positive_float, _positive_int, _strategy_list, add_setting

PROG = "%agent eval"


def eval_parser() -> UsageParser:
    p = UsageParser(prog=PROG, add_help=False,
                    description="Run an eval set (a YAML/JSONL task file, or DSEval's format) under several "
                                "configs; returns a DataFrame (also in _eval), one row per task × config × run.")
    p.add_argument("file", nargs="?", metavar="FILE", help="the task file")
    p.add_argument("--configs", metavar="NAMES", help="the file's configs to run (comma-separated; default: all)")
    p.add_argument("--strategies", type=_strategy_list, metavar="S1,S2,...",
                   help="one config per strategy instead of the file's")
    p.add_argument("--tasks", metavar="IDS", help="only these tasks (comma-separated ids)")
    p.add_argument("--runs", type=_positive_int, default=1, metavar="N", help="runs per task and config (default 1)")
    p.add_argument("--max-cost", type=_positive_float, metavar="USD",
                   help="USD the whole eval may spend (a call that could cross it is not made)")
    add_setting(p, "provider", help="the provider of configs that name none (a name or a variable)")
    add_setting(p, "model")
    add_setting(p, "permission", choices=COMPARE_PERMISSIONS, default="auto",
                help="what the runs' tools may do (default auto: code runs in each run's copy of the namespace)")
    add_setting(p, "max_steps", help="model calls allowed per run")
    add_setting(p, "timeout", help="seconds allowed per run")
    add_setting(p, "replay")
    p.add_argument("--rerun", action="store_true", help="call the model even where a recording matches (= --replay off)")
    p.add_argument("--judge-provider", metavar="P", help="the provider of the tasks' judge (default: --provider)")
    p.add_argument("-h", "--help", action="store_true", help="show this help")
    return p


def _names(text: str | None) -> list[str]:
    return [n.strip() for n in (text or "").split(",") if n.strip()]


def choose_configs(tasks: Any, args: argparse.Namespace) -> list[Any]:
    """The configs to run (see the module docstring); an unknown name is a usage error."""
    from ..evals.tasks import EvalConfig

    if args.configs and args.strategies:
        raise UsageError(f"{PROG}: give --configs or --strategies, not both")
    if args.strategies:
        return [EvalConfig.model_validate(s) for s in args.strategies]
    if args.configs:
        known = {c.name: c for c in tasks.configs}
        unknown = [n for n in _names(args.configs) if n not in known]
        if unknown:
            raise UsageError(f"{PROG}: {tasks.name} has no config {', '.join(map(repr, unknown))} "
                             f"(its configs: {', '.join(known) or 'none'})")
        return [known[n] for n in _names(args.configs)]
    return list(tasks.configs) or [EvalConfig(name="default", flags={})]


def run_eval_command(magics: Any, rest: list[str]) -> Any:
    """``%agent eval FILE [flags]``: the DataFrame (also ``_eval``); ``None`` for ``--help``."""
    from ..compare import clone_provider
    from ..evals.runner import EvalHooks, EvalRunner
    from ..evals.task_files import load_task_file
    from ..evals.tasks import TaskFileError
    from .eval_replay import EvalRecordings
    from .eval_view import eval_view
    from .providers import resolve_provider
    from .replay import replay_mode

    parser = eval_parser()
    args = parser.parse_args(rest)
    if args.help or not args.file:
        print(parser.format_help())
        return None
    try:
        tasks = load_task_file(args.file)
        if args.tasks:
            tasks = tasks.select(_names(args.tasks))
    except TaskFileError as exc:
        raise UsageError(f"{PROG}: {exc}") from None
    configs = choose_configs(tasks, args)
    defaults = {**magics.defaults(), **{k: v for k, v in vars(args).items()
                                        if k in ("provider", "model", "permission", "max_steps", "timeout", "replay")
                                        and v is not None}}
    options_of = {c.name: govern_turn(magics, validated({**defaults, **c.flags}, f"{PROG}: config {c.name}"), args, PROG)
                  for c in configs}  # the admin's policy (#38)
    shell = magics.shell
    user_ns = shell.user_ns if shell is not None else {}
    checked: dict[str, Any] = {}

    def live(config: Any) -> Any:
        if config.name not in checked:  # resolved (and checked) once per config, cloned per run
            checked[config.name] = governed_provider(magics, resolve_provider(options_of[config.name], user_ns, PROG), PROG)
        return clone_provider(checked[config.name])

    mode = replay_mode(options_of[configs[0].name], args)  # --replay/--rerun, else the kernel's
    if mode == "off":  # every run goes live: a provider that cannot be built fails the cell now
        for config in configs:
            live(config)
    recordings = EvalRecordings(magics, os.path.basename(args.file), mode, live, lambda c: options_of[c.name])
    hooks = EvalHooks(
        options=lambda c: options_of[c.name], provider=recordings, namespace=_namespace_copies(shell, user_ns),
        tools=lambda ns: cell_tools(ns, lambda: None),  # throw-away runs: their writes are not checkpointed
        workspace=lambda ns: workspace_for(ns, magics.workspace_tokens, magics.workspace_dir),
        judge=_judge(args, defaults, user_ns), working_directory=os.getcwd(), turn_hooks=governance_hooks(magics))
    runner = EvalRunner(tasks, configs, hooks, event_log=magics.manager.event_log, runs=args.runs,
                        max_cost=args.max_cost)
    view = eval_view(shell, runner.result)
    try:
        with closing_new_figures():  # the runs' plots live in their namespaces, not in this cell's output
            result = runner.run_all(view.row)
    finally:
        view.finish(runner.result, recordings.output_metadata())
    frame = result.to_dataframe()
    frame.attrs.update(eval_id=result.eval_id, stopped=result.stopped, summary=result.summary())
    user_ns["_eval"] = frame
    return frame


@contextlib.contextmanager
def closing_new_figures() -> Iterator[None]:
    """Close the pyplot figures the runs opened (a task's ``fig``), or the inline backend
    would show every one of them under the eval when the cell ends."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    before = set(pyplot.get_fignums()) if pyplot is not None else set()
    try:
        yield
    finally:
        pyplot = sys.modules.get("matplotlib.pyplot")
        for number in set(pyplot.get_fignums()) - before if pyplot is not None else ():
            pyplot.close(number)


def _namespace_copies(shell: Any, user_ns: dict[str, Any]) -> Any:
    """A fresh copy of the user's namespace per run (as each ``%%compare`` run gets)."""
    from ..evals import copy_namespace

    hidden = kernel_names(shell)

    def fresh() -> dict[str, Any]:
        namespace = copy_namespace(user_ns, hidden).namespace
        for name in hidden - KEPT_KERNEL_NAMES:
            if not name.startswith("_") and namespace.get(name) is user_ns.get(name):
                namespace.pop(name, None)
        return namespace

    return fresh


def _judge(args: argparse.Namespace, defaults: dict[str, Any], user_ns: dict[str, Any]) -> Any:
    """The tasks' judge: ``--judge-provider`` or the eval's provider, built once (a model's
    opinion, billed against ``--max-cost``); where it cannot be built, each verdict says why."""
    built: dict[str, Any] = {}

    def judge(task: Any, options: Any) -> Any:
        from ..evals import JudgeCheck
        from .providers import resolve_provider

        if "provider" not in built:
            name = args.judge_provider or defaults.get("provider") or "auto"
            try:
                built["provider"] = resolve_provider(validated({**defaults, "provider": name}, PROG), user_ns, PROG)
            except UsageError as exc:
                built["provider"] = None
                built["why"] = str(exc).removeprefix(f"{PROG}: ")
        if built["provider"] is None:
            return UnavailableJudge(task.judge or "", built["why"])
        return JudgeCheck(built["provider"], task.prompt, task.judge or "",
                          timeout_s=float(getattr(options, "timeout", 120) or 120))

    return judge
