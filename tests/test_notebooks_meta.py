"""The example notebooks: saved with outputs, offline by construction, free of secrets.

nbval (``pytest --nbval notebooks``) checks that re-running a notebook reproduces its saved
outputs. These tests check what nbval does not: that every notebook was saved executed, that
without an API key every ``%%agent`` cell uses a ``ScriptedProvider``, that the scripted-model
plumbing stays in one setup cell (the notebooks read as data → ``%%agent`` → result), and that no
key, token or local path ended up in the JSON. That a run with no key touches no network and no
live model is checked where the notebooks already run in a fresh environment:
``scripts/check_newcomer.py`` (its checks are tested in tests/test_check_newcomer.py).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL", "ANTHROPIC_BASE_URL")

# The stand-in models live beside the notebooks (notebooks/demo_models, tests/test_demo_models.py):
# each returns "auto" when a key or a local server is configured, a ScriptedProvider otherwise;
# demo_setup(model) makes it the kernel's default provider.
IMPORTS = re.compile(r"^from demo_models(?:\.\w+)? import (.+)$", re.M)

SECRET_PATTERNS = {
    "Anthropic/OpenAI-style key": re.compile(r"\bsk-(?:ant-)?[A-Za-z0-9_-]{16,}"),
    "AWS access key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    "Slack token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    "bearer token": re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{20,}"),
    "key assigned a literal": re.compile(
        r"""(?i)\b(?:api[_-]?key|secret|token|password)\b["']?\s*[:=]\s*["'][^"'\s]{8,}["']"""),
    "key put in the environment": re.compile(r"""environ\[\s*["']\w*(?:KEY|TOKEN|SECRET)\w*["']\s*\]\s*="""),
    "local path": re.compile(r"(?:/home/|/root/|/Users/|/tmp/|/private/var/|[A-Za-z]:\\\\Users\\\\)"),
}


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def strings(value: object, key: str = ""):
    """Every string in a notebook's JSON, except the widget front-end's own bundle (``_esm``,
    ``_css``, and ``_code_js``, ``_code_css`` of a kernel's first view: the package's build
    output, the same in every notebook)."""
    if key in ("_esm", "_css", "_code_js", "_code_css"):
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item, key)
    elif isinstance(value, dict):
        for k, item in value.items():
            yield k
            yield from strings(item, k)


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def agent_cells(nb: dict) -> list[dict]:
    return [c for c in code_cells(nb) if source(c).lstrip().startswith("%%agent")]


def agent_flags(cell: dict) -> list[str]:
    """The flags of a ``%%agent`` or ``%%compare`` cell."""
    return shlex.split(source(cell).lstrip().splitlines()[0].partition(" ")[2])


def test_there_are_notebooks():
    names = {p.stem for p in NOTEBOOKS}
    assert {"quickstart", "thinking_levels", "reflection", "strategies", "dataframe_tools", "sessions"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_saved_with_outputs(path):
    nb = load(path)
    cells = code_cells(nb)
    unexecuted = [i for i, c in enumerate(cells) if source(c).strip() and c.get("execution_count") is None]
    assert not unexecuted, f"{path.name}: code cells {unexecuted} were not executed before saving"
    counts = [c["execution_count"] for c in cells if source(c).strip()]
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: not saved from one top-to-bottom run"
    errors = [i for i, c in enumerate(cells) for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors, f"{path.name}: code cells {errors} saved an error"
    silent = [source(c).splitlines()[0] for c in agent_cells(nb) if not c.get("outputs")]
    assert not silent, f"{path.name}: %%agent cells without outputs: {silent}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_offline_uses_only_scripted_providers(path):
    """Models come only from demo_models, which decides live ("auto") or scripted, and no
    cell sets a provider by hand: ``demo_setup(<a demo_models model>)`` makes the notebook's
    model the kernel's default, so the agent cells need no ``--provider``. A cell keeps one
    only where choosing a provider is the point (a provider chain), naming a variable that
    holds a demo_models model."""
    nb = load(path)
    text = "\n".join(source(c) for c in code_cells(nb))
    cells = agent_cells(nb)
    assert cells, f"{path.name} has no %%agent cell"
    imported = demo_model_names(text)
    assert imported, f"{path.name} must take its models from demo_models (live or scripted, decided there)"
    assert not re.search(r"AgentMagics\.provider|%agent config[^\n]*provider\s*=|get_provider\(|\b(?:Scripted|Chain)Provider\(",
                         text), f"{path.name} sets a provider by hand (demo_setup(<model>) does it)"
    setup = re.findall(r"^demo_setup\((\w+)\(", text, re.M)
    assert setup and setup[0] in imported, (
        f"{path.name}: give demo_setup the notebook's model, e.g. `demo_setup(quickstart_model())`")
    for cell in [*cells, *(c for c in code_cells(nb) if source(c).lstrip().startswith("%%compare"))]:
        flags = agent_flags(cell)
        if "--provider" not in flags:
            continue
        name = flags[flags.index("--provider") + 1]
        assert name.isidentifier(), f"{path.name}: --provider {name} must name a variable"
        assigned = re.findall(rf"^{re.escape(name)}\s*=(?!=)(.*)$", text, re.M)
        assert assigned, f"{path.name}: --provider {name}, but {name} is never assigned"
        for rhs in assigned:
            call = re.match(r"\s*(\w+)\(", rhs)
            assert call and call.group(1) in imported, (
                f"{path.name}: {name} ={rhs} — use a model function of demo_models")
    # The saved run was offline: every turn a view showed came from the scripted provider.
    assert_answered_offline(nb, cells, path.name, saved=True)


def demo_model_names(text: str) -> set[str]:
    """The names a notebook imports from demo_models."""
    return {n.strip() for names in IMPORTS.findall(text) for n in names.split(",")}


SETUP_LINE = re.compile(r"^\s*(?:%load_ext jupyter_brain\b|from demo_models\b|import demo_models\b|demo_setup\()", re.M)


def is_setup_cell(cell: dict) -> bool:
    """A setup cell is a code cell with a line that loads the extension (``%load_ext
    jupyter_brain``), imports from ``demo_models`` or calls ``demo_setup(``: the plumbing
    that makes the notebook run offline and repeat its outputs, which a reader skips."""
    return cell["cell_type"] == "code" and bool(SETUP_LINE.search(source(cell)))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_at_most_one_setup_cell_first(path):
    """The notebook reads as data → ``%%agent`` → result: at most one setup cell (see
    ``is_setup_cell``), and it is the first code cell, before any data or agent cell; later
    cells neither load the extension again nor reach into demo_models."""
    cells = [c for c in code_cells(load(path)) if source(c).strip()]
    setups = [i for i, c in enumerate(cells) if is_setup_cell(c)]
    assert len(setups) <= 1, f"{path.name}: {len(setups)} setup cells (code cells {setups}); merge them into one"
    assert setups in ([], [0]), f"{path.name}: the setup cell (code cell {setups[0]}) must come first"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_cell_only_assigns_a_demo_model(path):
    """No ``model = dataframe_model("overview")`` cells between sections: a cell that does
    nothing but assign demo models is scripted-model plumbing (the notebook's one model is
    given to ``demo_setup``, and picks each section's script itself)."""
    import ast

    nb = load(path)
    imported = demo_model_names("\n".join(source(c) for c in code_cells(nb)))
    for cell in code_cells(nb):
        python = "\n".join(line for line in source(cell).splitlines() if not line.lstrip().startswith(("%", "!")))
        try:
            statements = ast.parse(python).body
        except SyntaxError:
            continue
        only_models = statements and all(
            isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name)
            and s.value.func.id in imported for s in statements)
        assert not only_models, f"{path.name}: a cell only assigns a demo model: {source(cell)!r}"


def assert_answered_offline(nb: Any, cells: list[Any], name: str, saved: bool = False) -> None:
    """Every turn's view names a scripted model, or a replay (``replayed/<model>``, issue
    #24: an unchanged cell replays the recording its output carries), and every recording
    was made by a scripted provider: no live model answered, now or when it was recorded."""
    # The finished turn's header (its Markdown, which the widget's last state no longer
    # carries: the turn's bundle replaces the widget, issue #40): "### Agent — Turn 1 · LABEL · …".
    labels = {m.group(1) for cell in cells for out in cell.get("outputs", [])
              for m in re.finditer(r"^### Agent \u2014 Turn \d+ \u00b7 (\S+)",
                                   "".join(out.get("data", {}).get("text/markdown", "")), re.M)}
    assert saved or labels, f"{name}: no finished agent turn in the outputs"
    assert all(label.startswith(("scripted", "replayed/")) for label in labels), (
        f"{name} was {'saved from' if saved else 'run as'} a run with {labels}")
    recorded_by = {out["metadata"]["jupyter_brain"]["recording"].get("provider")
                   for cell in cells for out in cell.get("outputs", [])
                   if "recording" in out.get("metadata", {}).get("jupyter_brain", {})}
    assert recorded_by and all(str(p).startswith("scripted") for p in recorded_by), (
        f"{name}: recordings made by {recorded_by}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_secrets_or_local_paths(path):
    raw = path.read_text(encoding="utf-8")
    text = "\n".join(strings(json.loads(raw)))
    for what, pattern in SECRET_PATTERNS.items():
        found = pattern.search(text)
        assert found is None, f"{path.name} contains a {what}: …{text[max(0, found.start() - 40):found.end() + 10]!r}…"
    for var in KEY_VARS:
        value = os.environ.get(var, "")
        if len(value) >= 8:
            assert value not in raw, f"{path.name} contains the value of ${var}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_deterministic_setup(path):
    """``demo_setup()`` before the first turn (a fresh event log, a fixed workspace and runtime
    message), and every cell's output checked by nbval: no cell skips the output check
    (notebooks/nbval_sanitize.cfg masks what varies: timestamps, turn ids, durations)."""
    nb = load(path)
    cells = code_cells(nb)
    first_turn = next(i for i, c in enumerate(cells) if _shows_agent_view(source(c)))
    assert any(re.search(r"^demo_setup\(", source(c), re.M) for c in cells[:first_turn]), (
        f"{path.name}: call demo_models.demo_setup() before the first turn")
    unchecked = [source(c) for c in cells if _unchecked(c)]
    assert not unchecked, f"{path.name}: cells skip nbval's output check: {[s.splitlines()[0] for s in unchecked]}"


def _unchecked(cell: dict) -> bool:
    """Whether nbval skips the cell, or runs it without comparing its outputs."""
    tags = {t.lower() for t in cell.get("metadata", {}).get("tags", [])}
    markers = re.findall(r"^\s*#\s*(NBVAL_\w+)\s*$", source(cell), re.M)
    return bool({"nbval-ignore-output", "nbval-skip"} & tags or {"NBVAL_IGNORE_OUTPUT", "NBVAL_SKIP"} & set(markers))


SANITIZE = NOTEBOOKS_DIR / "nbval_sanitize.cfg"  # --nbval-sanitize-with (scripts/test.sh)
# What nbval must still compare in a transcript: token counts, costs, step, tool and reflection counts.
COMPARED = re.compile(r"tokens in [\d,]+ / out [\d,]+[^*\n]*|\$[\d.]+|\d+ (?:steps?|tools?|reflections?)\b"
                      r"|(?:\| [^|\n]+){11}\|")  # a %%compare row up to its wall time


def _sanitizers() -> list[tuple[str, str]]:
    """The rules as nbval reads them."""
    plugin = pytest.importorskip("nbval.plugin")
    return plugin.get_sanitize_patterns(SANITIZE.read_text(encoding="utf-8"))


def _output_texts(nb: dict):
    for cell in code_cells(nb):
        for output in cell.get("outputs", []):
            if "text" in output:
                yield "".join(output["text"])
            for mime, value in output.get("data", {}).items():
                if mime.startswith("text/"):
                    yield "".join(value)


def test_sanitizers_mask_only_what_varies():
    """Each rule matches the saved outputs somewhere, and none of them reaches what nbval
    must compare: after sanitizing, the same token counts, costs and step counts remain."""
    rules = _sanitizers()
    assert len(rules) == 11, rules
    used = set()
    for path in NOTEBOOKS:
        for text in _output_texts(load(path)):
            clean = text
            for regex, replace in rules:
                if re.search(regex, clean):
                    used.add(regex)
                clean = re.sub(regex, replace, clean)
            assert COMPARED.findall(clean) == COMPARED.findall(text), f"{path.name}: a sanitizer hides {text!r}"
    assert used == {regex for regex, _ in rules}, "a sanitizer matches no saved output"


def _shows_agent_view(src: str) -> bool:
    head = src.lstrip()
    return head.startswith("%%agent") or head.startswith("%%compare") or "%agent replay" in src
