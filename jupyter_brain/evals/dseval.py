"""DSEval's problem format (``dseval`` on PyPI, MIT), read as eval-set tasks.

A DSEval problem set is a ``.py`` file cut into ``# %%`` sections; a section may open with
a ``\"\"\"`` YAML block (``question``, ``validator``, ``data``, ``execution``) followed by the
reference code. A section with a question is a problem; one without is context. A benchmark
is a folder of such files with a ``_manifest.yaml``. DSEval runs a set's problems in one
session, so here each problem's ``setup`` is every section before it (context code and the
earlier problems' reference solutions), its ``prompt`` the question, and its check a
``ReferenceCheck``: what DSEval's default "comparison" validator asks, as far as a
notebook turn shows it: the reference's result is in the answer (a number or a short
text) or in the namespace the run left behind (a table, an array), and the names the
reference sets (or those under ``validator.namespace_check``) hold the same values.
DSEval's ``data`` downloads and its other validators are not read.
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .checks import CheckResult, _numbers, one_line
from .tasks import TaskFile, TaskFileError, parse_task_file

_SECTION = "# %%\n"
_HEADER = re.compile(r'r?"""([\s\S]+?)"""\n([\s\S]*)')


def dseval_entries(text: str, stem: str) -> list[dict[str, Any]]:
    """A problem file's problems as task entries (see the module docstring)."""
    import yaml

    entries: list[dict[str, Any]] = []
    before: list[str] = []
    for section in text.split(_SECTION)[1:]:
        section = section.strip()
        if not section:
            continue
        header, code = {}, section
        match = _HEADER.match(section)
        if match is not None:
            try:
                header = yaml.safe_load(match.group(1)) or {}
            except yaml.YAMLError as exc:
                raise TaskFileError(f"{stem}.py: section {len(before) + 1}'s YAML header: {exc}") from None
            code = match.group(2).strip()
        if isinstance(header, dict) and header.get("question"):
            validator = header.get("validator") if isinstance(header.get("validator"), dict) else {}
            names = validator.get("namespace_check") or {}
            entries.append({
                "id": f"{stem}-{len(entries) + 1}", "prompt": str(header["question"]).strip(),
                "setup": "\n\n".join(before), "reference": code,
                "reference_names": list(names) if isinstance(names, dict) else [], "tags": ["dseval", stem],
            })
        before.append(code)
    return entries


def load_dseval(path: Path) -> TaskFile:
    """A DSEval problem file, or a benchmark folder (every ``*.py`` not starting with ``_``)."""
    if path.is_dir():
        if not (path / "_manifest.yaml").exists():
            raise TaskFileError(f"{path}: a folder of tasks needs DSEval's _manifest.yaml")
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
    else:
        files = [path]
    entries: list[dict[str, Any]] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise TaskFileError(f"{file}: cannot read it ({exc.strerror or exc})") from None
        if _SECTION not in text:
            raise TaskFileError(f"{file.name}: not a DSEval problem file (no '# %%' sections)")
        entries.extend(dseval_entries(text, file.stem))
    if not entries:
        raise TaskFileError(f"{path.name}: no DSEval problem (a section with a 'question') found")
    return parse_task_file({"tasks": entries}, path.name)


def run_reference(setup: str, reference: str) -> tuple[dict[str, Any], Any]:
    """The reference's namespace (setup, then reference) and its last expression's value."""
    namespace: dict[str, Any] = {"__name__": "__dseval__"}
    tree = ast.parse(reference)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(setup, "<setup>", "exec"), namespace)  # the task file's own code
        exec(compile(tree, "<reference>", "exec"), namespace)
        value = eval(compile(ast.Expression(last.value), "<reference>", "eval"), namespace) if last else None
    return namespace, value


def assigned_names(code: str) -> list[str]:
    """The top-level names a piece of code assigns (``df = …``, ``a, b = …``)."""
    names: list[str] = []
    for node in ast.parse(code).body:
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else [])
        for target in targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Name) and leaf.id not in names:
                    names.append(leaf.id)
    return names


def same(a: Any, b: Any) -> bool:
    """Equal as data: tables by ``equals``, arrays element-wise, floats nearly."""
    try:
        if hasattr(a, "equals") and type(a) is type(b):
            return bool(a.equals(b))
        if hasattr(a, "shape") and hasattr(b, "shape"):
            import numpy as np

            return a.shape == b.shape and bool(np.allclose(a, b, equal_nan=True))
        if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
            return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9)
        return bool(a == b)
    except Exception:  # noqa: BLE001 - incomparable values are different
        return False


def _scalar(value: Any) -> bool:
    return isinstance(value, str | bool | int | float) or (hasattr(value, "item") and getattr(value, "ndim", 1) == 0)


def _in_answer(value: Any, answer: str) -> bool:
    if isinstance(value, bool) or isinstance(value, str):
        return str(value).strip().lower() in answer.lower()
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return any(math.isclose(got, number, rel_tol=1e-2, abs_tol=1e-6) for _, got in _numbers(answer))


@dataclass(frozen=True)
class ReferenceCheck:
    """A DSEval problem's check: the reference solution's result and names, reproduced."""

    setup: str
    reference: str
    names: tuple[str, ...] = ()
    kind: str = "reference"
    label: str = "matches the reference solution"

    def evaluate(self, answer: str, namespace: Mapping[str, Any]) -> CheckResult:
        try:
            expected_ns, value = run_reference(self.setup, self.reference)
        except Exception as exc:  # noqa: BLE001 - the task file's reference is broken: say so
            return self._fail(f"the reference solution itself fails: {type(exc).__name__}: {exc}")
        for name in self.names or tuple(assigned_names(self.reference)):
            if name not in namespace:
                return self._fail(f"{name} is not defined (the reference sets it)")
            if name in expected_ns and not same(namespace[name], expected_ns[name]):
                return self._fail(f"{name} differs from the reference's")
        if value is None:
            pass
        elif _scalar(value):
            if not _in_answer(value, answer or ""):
                return self._fail(f"the reference's result {one_line(repr(value), 60)} is not in the answer")
        elif not any(same(v, value) for k, v in list(namespace.items()) if not k.startswith("_")):
            return self._fail(f"no variable holds the reference's result ({type(value).__name__})")
        return CheckResult(kind=self.kind, label=self.label, passed=True, reason="")

    def _fail(self, reason: str) -> CheckResult:
        return CheckResult(kind=self.kind, label=self.label, passed=False, reason=one_line(reason))
