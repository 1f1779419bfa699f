"""Judging answers: checks (``--expect``, ``--check``, ``--judge``), success rates with
their interval, and each run's own copy of the user's namespace. Used by ``%%compare``;
free of IPython and notebook code so eval sets can use it too."""

from .checks import Check, CheckResult, ExpectCheck, ExprCheck, all_passed, failure_reason, run_checks
from .judge import JudgeCheck
from .namespace import NamespaceCopy, NamespaceSnapshot, copy_namespace
from .rates import Rate, success_rate, wilson_interval

__all__ = ["Check", "CheckResult", "ExpectCheck", "ExprCheck", "JudgeCheck", "NamespaceCopy",
           "NamespaceSnapshot", "Rate", "all_passed", "copy_namespace", "failure_reason", "run_checks",
           "success_rate", "wilson_interval"]
