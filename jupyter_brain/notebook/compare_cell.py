"""One ``%%compare`` cell: the prompt under several strategies at once, side by side.

The provider of each run is decided here, before any run starts (see
``jupyter_brain.compare`` for why instances are cloned or shared); the runs themselves
and their records are ``jupyter_brain.compare.run_comparison``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..comparison_costs import record_comparison_cost
from .compare_checks import comparison_checks, namespace_guard, run_environments, without_checks
from .compare_judge import judge_verdicts, keep_verdicts
from .compare_replay import replaying_runs
from .governance import govern_turn, governance_hooks, governed_factory
from .interpolate import interpolate
from .options import options_for
from .parsers import compare_parser, split_flags
from .providers import check_provider, resolve_provider
from .turn_failure import comparison_failure, fail_statuses
from .turn_keywords import prompt_directory
from .views import close_view, compare_view
from .web_search import registered_web_search

if TYPE_CHECKING:
    from ..providers.base import LLMProvider
    from ..settings_model import AgentOptions


def run_compare_cell(magics: Any, line: str, cell: str) -> None:
    """``%%compare --strategies react,cot,...`` + the prompt; the result goes to ``_compare``."""
    from ..compare import run_comparison

    parser = compare_parser()
    args = parser.parse_args(split_flags(line, "%%compare"))
    if args.help:
        print(parser.format_help())
        return None
    if args.out is not None and not args.out.isidentifier():
        raise UsageError(f"%%compare: --out needs a variable name, got {args.out!r}")
    if not cell.strip():
        raise UsageError("%%compare: write the prompt in the cell body, below the %%compare line")
    options = govern_turn(magics, options_for(magics.defaults(), args, "%%compare"), args, "%%compare")  # policy (#38)
    fail_on = fail_statuses(getattr(magics, "fail_on", None))  # AgentMagics.fail_on, checked before the runs
    user_ns = magics.shell.user_ns if magics.shell is not None else {}
    factory = replaying_runs(magics, options, args, without_checks(line), cell, args.strategies, args.runs,  # (#24)
                             lambda: governed_factory(magics, compare_providers(options, args.strategies, user_ns)))
    prompt = interpolate(cell.strip(), user_ns)
    args.check_timeout = args.check_timeout or getattr(magics, "check_timeout", None)  # AgentMagics.check_timeout
    verdicts = judge_verdicts(magics, options, args)  # a judge's recorded verdicts (#27)
    checks = comparison_checks(args, options, prompt, user_ns, verdicts)  # --expect, --check, --judge (#27)
    changed_since = namespace_guard(magics, user_ns)  # the user's variables, before any run
    view = compare_view(magics.shell, args.strategies, args.runs, prompt)
    event_log = magics.manager.event_log
    try:
        result = run_comparison(
            prompt, args.strategies, factory, list, options,  # tools: each run's own (environment)
            runs=args.runs, event_log=event_log, on_event=view.handle, on_run_end=view.run_finished,
            working_directory=os.getcwd(), prompt_directory=prompt_directory(magics.runtime),
            web_search=registered_web_search(),  # @jupyter_brain.web_search
            checks=checks, environment=run_environments(magics, user_ns, no_copy=args.no_copy),  # its own copy
            hooks=governance_hooks(magics),  # the policy at every model call of every run (#38)
        )
        result.namespace_changes = changed_since()  # DSEval's "namespace intact"
        record_comparison_cost(event_log, magics.manager.current.name, result)  # %agent cost: runs + judge (#27)
        view.bind(result.comparison_id, event_log)
        view.finish(result)  # the header's notes: a budget stop, a changed user namespace
        view.output_metadata = keep_verdicts(verdicts, event_log, factory.output_metadata())  # + the judge's
    finally:
        close_view(view)
    user_ns["_compare"] = result
    if args.out:
        user_ns[args.out] = result
    failure = comparison_failure(result.rows, fail_on)
    if failure is not None:  # every run failed: the cell fails, so Run All stops
        raise failure
    return None


def compare_providers(options: AgentOptions, strategies: list[str],
                      user_ns: dict[str, Any]) -> Callable[[str, int], LLMProvider]:
    """``(strategy, run) -> provider``: a dict variable maps strategies to providers
    (instances or names); otherwise one provider for all. Names are built anew for
    every run, ScriptedProviders cloned per run, other instances shared (see
    jupyter_brain.compare). Every choice is checked here, before any run starts."""
    from ..compare import clone_provider
    from ..providers.base import LLMProvider

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
                check_provider(p, f"{name}[{s!r}]", "%%compare")
    else:
        chosen = {s: mapping if isinstance(mapping, LLMProvider) else name for s in strategies}

    def build(choice: Any) -> LLMProvider:
        if not isinstance(choice, str):
            return clone_provider(choice)
        return resolve_provider(options.model_copy(update={"provider": choice}), user_ns, "%%compare")

    for choice in {c for c in chosen.values() if isinstance(c, str)}:
        build(choice)  # a bad name fails the cell now, not each run

    def factory(strategy: str, run: int) -> LLMProvider:
        return build(chosen[strategy])

    return factory
