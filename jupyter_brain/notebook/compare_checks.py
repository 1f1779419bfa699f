"""A ``%%compare`` cell's checks and each run's own namespace.

``--expect``, ``--check`` and ``--judge`` become ``jupyter_brain.evals`` checks here; the
judge's provider is ``--judge-provider`` or the comparison's own ``--provider`` (one
instance for every run's verdict; its calls are billed apart from the runs'). Each run
gets its own copy of the user's namespace (``evals.namespace``), its tools bound to that
copy, and the cell checks afterwards that the user's own variables are intact.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

from .kernel_inputs import cell_tools, workspace_for


def comparison_checks(args: Any, options: Any, prompt: str, user_ns: dict[str, Any],
                      verdicts: Any = None) -> list[Any]:
    """The cell's checks in the order written: ``--expect``, ``--check``, then the judge
    (``verdicts``: those it gave before, ``compare_judge.py``). A ``--check`` that does not
    compile is a usage error now, before any run."""
    from ..evals import ExpectCheck, ExprCheck
    from ..evals.checks import DEFAULT_CHECK_TIMEOUT_S

    checks: list[Any] = [ExpectCheck(text) for text in args.expect if text.strip()]
    timeout_s = getattr(args, "check_timeout", None) or DEFAULT_CHECK_TIMEOUT_S  # the cell fills in the kernel's
    for expression in args.check:
        try:
            compile(expression, "<check>", "eval")
        except SyntaxError as exc:
            raise UsageError(f"%%compare: --check {expression!r} is not a Python expression ({exc.msg})") from None
        checks.append(ExprCheck(expression, timeout_s=timeout_s))
    if args.judge_provider is not None and args.judge is None:
        raise UsageError("%%compare: --judge-provider needs --judge")
    if args.judge is not None:
        checks.append(judge_check(args, options, prompt, user_ns, verdicts))
    return checks


def judge_check(args: Any, options: Any, prompt: str, user_ns: dict[str, Any], verdicts: Any = None) -> Any:
    """The judge: its provider (built and checked now), the question, the rubric, and the
    verdicts it gave before (reused without a call)."""
    from ..evals import JudgeCheck
    from .providers import resolve_provider

    name = args.judge_provider or options.provider
    if not args.judge_provider and isinstance(user_ns.get(name) if name.isidentifier() else None, dict):
        raise UsageError(f"%%compare: --provider {name} maps strategies to providers; name the judge's with "
                         "--judge-provider")
    judge = f"{name}:{options.model or ''}"  # which judge, in its verdicts' keys
    try:
        provider = resolve_provider(options.model_copy(update={"provider": name}), user_ns, "%%compare")
    except UsageError as exc:  # no key here: the runs may still replay; each verdict says why
        return UnavailableJudge(args.judge.strip(), str(exc).removeprefix("%%compare: "), prompt, judge, verdicts)
    return JudgeCheck(provider, prompt, args.judge.strip(),
                      timeout_s=float(getattr(options, "timeout", 120) or 120), memory=verdicts, judge=judge)


CHECK_FLAGS = ("--expect", "--check", "--judge-provider", "--check-timeout")  # each takes one value
JUDGE_FLAG = "--judge"  # its rubric is optional
COPY_SWITCHES = ("--no-copy",)  # how the runs get your variables, not what the model is asked


def without_checks(line: str) -> str:
    """The magic line without its checks: the runs' recordings are keyed by what the model
    was asked, so adding or editing a check replays the answers and judges them anew."""
    try:
        words = shlex.split(line)
    except ValueError:
        return line  # the parser reports the stray quote
    kept: list[str] = []
    drop_next = False
    for i, word in enumerate(words):
        if drop_next:
            drop_next = False
        elif word in CHECK_FLAGS:
            drop_next = True
        elif word in COPY_SWITCHES:
            continue
        elif word == JUDGE_FLAG:
            drop_next = i + 1 < len(words) and not words[i + 1].startswith("--")
        elif not word.startswith(tuple(f"{f}=" for f in (*CHECK_FLAGS, JUDGE_FLAG))):
            kept.append(word)
    return line if len(kept) == len(words) else shlex.join(kept)


# The kernel's own names a run's code may use (``get_ipython`` runs its %magics); its other
# injected names (``open``) are left out of a run's copy (its builtin stands in).
KEPT_KERNEL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit"})


@dataclass(frozen=True)
class UnavailableJudge:
    """A judge whose model cannot be built on this machine (no key): a saved comparison still
    replays its answers offline, with the verdicts recorded for them; a run with none says it
    was not judged, and why."""

    rubric: str
    why: str
    question: str = ""
    judge: str = ""
    memory: Any = None
    kind: str = "judge"

    @property
    def label(self) -> str:
        return f"judge: {self.rubric}" if self.rubric else "judge"

    def evaluate(self, answer: str, namespace: Any) -> Any:
        from ..evals import CheckResult
        from ..evals.checks import one_line
        from ..evals.judge import DEFAULT_RUBRIC, recorded_verdict
        from ..evals.judge_memory import verdict_key

        key = verdict_key(self.question, answer or "", self.rubric or DEFAULT_RUBRIC, self.judge)
        recorded = recorded_verdict(self.memory, key, self.label, self.kind) if (answer or "").strip() else None
        if recorded is not None:
            return recorded
        return CheckResult(kind=self.kind, label=self.label, passed=False, opinion=True,
                           reason=one_line(f"not judged: {self.why}"))


def kernel_names(shell: Any) -> set[str]:
    """The names IPython put into the namespace (not the user's variables)."""
    return set(getattr(shell, "user_ns_hidden", {}) or {}) if shell is not None else set()


def run_environments(magics: Any, user_ns: dict[str, Any], *, no_copy: bool = False) -> Callable[[str, int], Any]:
    """``(strategy, run) -> RunEnvironment``: a fresh copy of ``user_ns`` for each run, the
    tools bound to it and the workspace view of it. Variables over
    ``AgentMagics.compare_copy_limit_mb`` (all of them with ``--no-copy``) are shared
    read-only instead (``evals.namespace``), and a note names them before the runs start."""
    from ..compare import RunEnvironment
    from ..evals import copy_namespace

    hidden = kernel_names(magics.shell)
    share = shared_variables(magics, user_ns, hidden, no_copy)

    def environment(strategy: str, run: int) -> RunEnvironment:
        namespace = copy_namespace(user_ns, hidden, share).namespace
        for name in hidden - KEPT_KERNEL_NAMES:  # IPython's ``open``: the copy would list it as a variable
            if not name.startswith("_") and namespace.get(name) is user_ns.get(name):
                namespace.pop(name, None)
        return RunEnvironment(
            # Concurrent throw-away runs: their writes are not checkpointed (no undo).
            tools=cell_tools(namespace, lambda: None), namespace=namespace,
            workspace=workspace_for(namespace, magics.workspace_tokens, magics.workspace_dir))

    return environment


MB = 1024 * 1024


def shared_variables(magics: Any, user_ns: dict[str, Any], hidden: set[str], no_copy: bool) -> set[str]:
    """The variables the runs share instead of copying, with a one-line note naming them."""
    from ..evals.namespace import big_variables, is_shared

    if no_copy:
        names = {n for n, v in list(user_ns.items()) if not is_shared(n, v, hidden)}
        if names:
            print(f"note: --no-copy: the runs share your variables ({_names(sorted(names))}); "
                  "a change one makes in place reaches the others and yours")
        return names
    limit_mb = float(getattr(magics, "compare_copy_limit_mb", 0) or 0)
    big = big_variables(user_ns, int(limit_mb * MB), hidden)
    if big:
        listed = _names([f"{n} ({big[n] / MB:,.1f} MB)" for n in sorted(big)])
        print(f"note: not copied for each run, shared read-only: {listed}, over "
              f"AgentMagics.compare_copy_limit_mb = {limit_mb:g}; a run that changes one in place may change yours "
              "(the namespace check after the runs says)")
    return set(big)


def _names(items: list[str], most: int = 8) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def namespace_guard(magics: Any, user_ns: dict[str, Any]) -> Callable[[], list[str]]:
    """Fingerprint the user's variables now; the returned call names what changed since."""
    from ..evals import NamespaceSnapshot

    hidden = kernel_names(magics.shell)
    snapshot = NamespaceSnapshot.take(user_ns, hidden)
    return lambda: snapshot.changes(user_ns, hidden)


__all__ = ["comparison_checks", "namespace_guard", "run_environments", "without_checks"]
