"""One ``%%agent`` cell: parse the flags, pick the session and provider, run one turn.

The view is shown *before* the turn streams into it, and closed (flushed, Markdown
transcript added) whatever happens; the ``TurnResult`` goes to ``_agent`` (and ``--out``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError

from ..providers.capabilities import provider_secrets
from .cell_identity import cell_run
from .code_cells import insert_code_cell
from .conventions import ConventionsHook, cell_conventions
from .elicitation import ElicitationTurn, kernel_elicitor
from .governance import govern_turn, governance_hooks, governed_provider
from .headless import is_headless
from .interpolate import interpolate
from .kernel_inputs import approver_for, cell_tools, workspace_for
from .mcp_cell import MCPCellHook, cell_inputs
from .memory import memory_roles
from .notebook_session import kernel_base, session_notice
from .options import options_for
from .parsers import agent_parser, split_flags
from .providers import resolve_provider
from .replay import approver_with_recording, cell_source, output_metadata, replaying_provider
from .sampling import SamplingTurn, kernel_sampler, sampling_approver
from .turn_failure import fail_statuses, turn_failure
from .turn_keywords import prompt_directory, turn_keywords
from .turn_numbers import numbered
from .views import agent_view, close_view
from .warm_up import at_first_output
from .web_search import registered_web_search


def run_agent_cell(magics: Any, line: str, cell: str, *, interpolate_prompt: bool = True,
                   first_word: Callable[[], None] | None = None) -> None:
    """``%%agent [flags]`` + the prompt in the cell body; ``magics`` holds the kernel's state.
    ``interpolate_prompt=False``: the prompt is used as written (it holds code, e.g. ``%agent fix``);
    ``first_word``: called at the turn's first output (``warm_up.hold``'s release)."""
    parser = agent_parser()
    args = parser.parse_args(split_flags(line, "%%agent"))
    if args.help:
        print(parser.format_help())
        return None
    prompt = cell.strip()
    if not prompt and not args.mcp_prompt:
        raise UsageError("%%agent: write the prompt in the cell body, below the %%agent line")
    options = govern_turn(magics, options_for(magics.defaults(), args), args)  # the admin's policy (#38)
    fail_on = fail_statuses(getattr(magics, "fail_on", None))  # AgentMagics.fail_on, checked before the turn
    if options.reflect_every and options.think == "off":
        print("note: --reflect-every needs a think level; no reflection at --think off "
              "(use --think low, medium or high).")
    manager = magics.manager
    try:
        if args.new:
            session = manager.new(args.session)
        elif args.session:
            session = manager.use(args.session)
        else:
            session = manager.current
    except ValueError as exc:
        raise UsageError(f"%%agent: {exc}") from None
    notice = session_notice(session, kernel_base(magics.shell))  # "continuing session X (N turns)"
    if notice:
        print(notice)
    if options.engine != "builtin":  # an outside agent over ACP (issue #36)
        from .engine_cell import run_engine_cell

        user_ns = magics.shell.user_ns if magics.shell is not None else {}
        return run_engine_cell(magics, args, options, line, cell,
                               interpolate(prompt, user_ns) if interpolate_prompt else prompt, session)
    run = cell_run(magics.shell, line, cell)  # its earlier turn leaves the history (unless --append)
    user_ns = magics.shell.user_ns if magics.shell is not None else {}
    provider = replaying_provider(magics, options, args, cell_source(line, cell), user_ns,  # recordings (#24)
                                  lambda: governed_provider(magics, resolve_provider(
                                      options, user_ns, cache=getattr(magics, "provider_cache", None))))
    conventions = cell_conventions(magics)  # AGENTS.md and Agent Skills of the folder chain (conventions/)
    keywords = turn_keywords(options, provider.live or provider, magics.data_dir, magics.runtime,  # --top-k,
                             agent_skills=conventions.skills)  # --citations, --skill
    if interpolate_prompt:
        prompt = interpolate(prompt, user_ns)  # the user's text only: a server's prompt is used as sent
    sampler = kernel_sampler(magics)  # answers MCP servers' sampling requests (installed where mcp.json is)
    mcp_inputs = cell_inputs(magics, args, prompt)  # --resource, --mcp-prompt (a failure stops the cell here)
    if mcp_inputs is not None:
        prompt = mcp_inputs.prompt
    view = agent_view(magics.shell, fold=magics.fold)
    headless = is_headless(magics.shell)
    sampling = SamplingTurn(options.permission, sampling_approver(view, magics.approval_timeout, headless=headless),
                            provider, timeout_s=magics.approval_timeout)
    sampler.begin(sampling)
    elicitor = kernel_elicitor(magics)  # answers MCP servers' forms and links (a card; headless: declined)
    elicitation = ElicitationTurn(view, headless, provider, sampling, timeout_s=magics.approval_timeout)
    elicitor.begin(elicitation)
    try:
        store = magics.checkpoint_store()
        harness = session.build_harness(
            provider,
            cell_tools(user_ns, store, conventions.readable_folders()),
            options,
            approver=approver_with_recording(
                approver_for(view, magics.approval_timeout, headless=headless), provider),
            workspace=workspace_for(user_ns, magics.workspace_tokens, magics.workspace_dir),
            working_directory=os.getcwd(), prompt_directory=prompt_directory(magics.runtime),
            web_search=registered_web_search(),  # @jupyter_brain.web_search
            secrets=provider_secrets(provider),
            checkpoint_store=store,
            **memory_roles(manager, options.memory, provider),  # AgentMagics.memory
            hooks=[*getattr(magics, "hooks", {}).values(),  # %agent hooks add NAME
                   MCPCellHook(mcp_inputs, sampling),  # --resource as context; the sampler's card
                   ConventionsHook(conventions),  # the agents_md and skills layers, load_skill
                   *governance_hooks(magics)],  # the policy at every model call: provider, daily caps
        )
        if harness.redactor is not None and hasattr(view, "redact"):
            view.redact = harness.redactor  # also masks the configured keys' values
        # "Turn N" of the session; its first word lets the warm-up go on (#40)
        on_event = at_first_output(numbered(view.handle, len(session.turns()) + 1), first_word)
        result = session.run(prompt, harness, on_event=on_event, cell=run, append=args.append, **keywords)
        view.output_metadata = output_metadata(provider)  # the recording, saved with the notebook
        # Imported here, after the turn: its eval machinery is not on the first word's path (#40).
        from .turn_export import remember_turn

        remember_turn(magics, line, cell, result, provider, session)  # to_test(), %agent export-test (#27)
    finally:
        sampler.end(sampling)
        elicitor.end(elicitation)
        close_view(view)
    user_ns["_agent"] = result
    lab = getattr(magics, "lab", None)  # the JupyterLab extension's comm, if any (lab_channel.py)
    if lab is not None:  # status bar figures; --cells as cells (or the one-cell fallback)
        lab.after_turn(session, result, cells=options.cells, prompt=prompt)
    elif options.cells:
        insert_code_cell(magics.shell, result, prompt)
    if args.out:
        if not args.out.isidentifier():
            raise UsageError(f"%%agent: --out needs a variable name, got {args.out!r}")
        user_ns[args.out] = result
    failure = turn_failure(result, fail_on, options=options, redact=harness.redactor)
    if failure is not None:  # the view and _agent are there; the cell fails, so Run All stops
        raise failure
    return None
