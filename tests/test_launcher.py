"""``bash scripts/lab.sh``: the install is skipped while nothing it is made from changed
(scripts/install_stamp.py), arguments reach JupyterLab, root gets ``--allow-root``, and
the venv's JupyterLab defaults turn its news pop-up off. No real install here: the
launch after an unchanged tree runs against a stand-in virtualenv
(benchmarks/second_launch.py times the real one)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("install_stamp", ROOT / "scripts" / "install_stamp.py")
assert _spec is not None and _spec.loader is not None
install_stamp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(install_stamp)


def _tree(root: Path) -> Path:
    """A checkout's install inputs and build outputs, in miniature."""
    for rel, text in {
        "pyproject.toml": "[project]\nname = 'x'\n",
        "scripts/install_lab.sh": "echo install\n",
        "js/package.json": "{}",
        "js/package-lock.json": "{}",
        "js/src/view.ts": "export {};\n",
        "js/lab/src/index.ts": "export {};\n",
        "jupyter_brain/static/agent_view.js": "",
        "jupyter_brain/static/compare_view.js": "",
        "jupyter_brain/labextension/package.json": "{}",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _installed(tmp_path: Path) -> tuple[Path, Path]:
    root, venv = _tree(tmp_path / "repo"), tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "jupyter").write_text("")
    install_stamp.begin(venv, root)
    install_stamp.finish(venv, 81.0, root)
    return root, venv


def test_an_unchanged_tree_needs_no_install(tmp_path) -> None:
    root, venv = _installed(tmp_path)
    assert install_stamp.why_install(venv, root) is None
    stamp = json.loads((venv / install_stamp.STAMP).read_text())
    assert stamp["seconds"] == 81.0 and "js/src/view.ts" in stamp["inputs"]


@pytest.mark.parametrize(("rel", "said"), [
    ("pyproject.toml", "pyproject.toml changed"),
    ("js/package-lock.json", "js/package-lock.json changed"),
    ("js/src/view.ts", "js/src/view.ts changed"),
    ("js/lab/src/index.ts", "js/lab/src/index.ts changed"),
    ("js/src/parts/new.ts", "js/src/parts/new.ts changed"),  # a new source file
    ("scripts/install_lab.sh", "scripts/install_lab.sh changed"),
])
def test_a_changed_input_brings_the_install_back(tmp_path, rel, said) -> None:
    root, venv = _installed(tmp_path)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text((root / rel).read_text() + "// edited\n" if (root / rel).exists() else "new\n")
    assert install_stamp.why_install(venv, root) == said


def test_what_npm_and_the_build_write_is_not_an_input(tmp_path) -> None:
    root, venv = _installed(tmp_path)
    for rel in ("js/node_modules/esbuild/index.js", "js/lab/node_modules/x/y.js", "js/src/generated/events.ts",
                "js/lab/lib/index.js", "js/lab/view/turn_view.js", "js/lab/tsconfig.tsbuildinfo", "js/test/a.test.ts"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("built")
    assert install_stamp.why_install(venv, root) is None


def test_a_missing_build_or_venv_or_a_failed_install_installs_again(tmp_path) -> None:
    root, venv = _installed(tmp_path)
    (root / "jupyter_brain/static/agent_view.js").unlink()
    assert install_stamp.why_install(venv, root) == "jupyter_brain/static/agent_view.js is missing"
    root, venv = _installed(tmp_path / "2")
    (venv / "bin" / "jupyter").unlink()
    assert install_stamp.why_install(venv, root) == "venv/bin/jupyter is missing"
    root, venv = _installed(tmp_path / "3")
    install_stamp.begin(venv, root)  # an install that began and never finished
    assert install_stamp.why_install(venv, root) == "no finished install recorded in it"


def test_an_install_that_built_no_front_end_leaves_no_stamp(tmp_path) -> None:
    root, venv = _installed(tmp_path)
    install_stamp.begin(venv, root)
    (root / "jupyter_brain/labextension/package.json").unlink()  # npm's build failed: the hook only warns
    with pytest.raises(SystemExit, match="did not build jupyter_brain/labextension/package.json"):
        install_stamp.finish(venv, 60.0, root)
    assert not (venv / install_stamp.STAMP).exists()


def test_another_python_or_folder_installs_again() -> None:
    before = {"(python)": "3.11.7 /usr/bin/python3.11", "(folder)": "/a", "pyproject.toml": "1"}
    assert install_stamp.changed(before, dict(before)) is None
    assert install_stamp.changed(before, {**before, "(python)": "3.12.1 /usr/bin/python3.12"}) == (
        "its Python changed (3.11.7 -> 3.12.1)")
    assert install_stamp.changed(before, {**before, "(folder)": "/b"}) == "the checkout moved (from /a)"


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_the_inputs_under_js_are_the_files_git_keeps_there_but_the_tests() -> None:
    """NOT_INPUTS mirrors .gitignore's js/ lines: a build output counted as an input would
    make every launch install again, and a source left out would never trigger one."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "js"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split()
    kept = sorted(p for p in listed if not p.startswith(("js/test/", "js/lab/test/")) and (ROOT / p).is_file())
    assert [p for p in install_stamp.input_paths(ROOT) if p.startswith("js/")] == kept


def _stand_in_venv(tmp_path: Path) -> Path:
    """A venv whose Python runs install_stamp.py and whose ``jupyter`` prints its arguments."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    jupyter = venv / "bin" / "jupyter"
    jupyter.write_text('#!/bin/sh\necho "JUPYTER $*"\n')
    jupyter.chmod(0o755)
    return venv


@pytest.mark.skipif(not all((ROOT / rel).is_file() for rel in install_stamp.OUTPUTS), reason="front-end not built")
def test_the_second_launch_skips_the_install_and_passes_arguments_to_jupyterlab(tmp_path) -> None:
    venv = _stand_in_venv(tmp_path)
    python = str(venv / "bin" / "python")
    for step in (["begin"], ["done", "42"]):  # what a finished install leaves, for this tree
        subprocess.run([python, "scripts/install_stamp.py", step[0], str(venv), *step[1:]], cwd=ROOT, check=True)
    done = subprocess.run(["bash", "scripts/lab.sh", "--port", "8899", "--ServerApp.x=a b"], cwd=ROOT,
                          env={**os.environ, "VENV": str(venv)}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    said, launched = done.stdout.splitlines()
    assert said.startswith("jupyter-brain: venv matches this tree (installed just now, in 42 s): nothing to install;")
    assert "quickstart.ipynb" in said and "installing" not in done.stdout
    root_flag = " --allow-root" if os.geteuid() == 0 else ""
    assert launched == f"JUPYTER lab --notebook-dir=notebooks{root_flag} --port 8899 --ServerApp.x=a b"


def test_the_venvs_jupyterlab_defaults_turn_the_news_pop_up_off(tmp_path) -> None:
    """scripts/lab_settings.json, where install_lab.sh puts it, is read by JupyterLab's
    server as a default of the notification plugin, with a value its schema allows."""
    from jupyterlab_server.settings_utils import _get_overrides

    (tmp_path / "overrides.d").mkdir()
    shutil.copy(ROOT / "scripts" / "lab_settings.json", tmp_path / "overrides.d" / "jupyter-brain.json")
    assert "overrides.d/jupyter-brain.json" in (ROOT / "scripts" / "install_lab.sh").read_text()
    overrides, error = _get_overrides(str(tmp_path))
    assert not error
    plugin = overrides["@jupyterlab/apputils-extension:notification"]
    schema = Path(sys.prefix) / "share/jupyter/lab/schemas/@jupyterlab/apputils-extension/notification.json"
    allowed = [choice["const"] for choice in json.loads(schema.read_text())["properties"]["fetchNews"]["oneOf"]]
    assert plugin["fetchNews"] == "false" and "false" in allowed
