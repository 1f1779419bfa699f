"""Build the wheel, install it into a fresh virtualenv, and check the JupyterLab extension came with it.

What a user gets from ``pip install jupyter-brain`` (no Node, no editable install): the
wheel must hold ``install.json`` and the built extension under
``share/jupyter/labextensions/jupyter-brain``, and ``jupyter labextension list`` in the new
environment must show it enabled and OK, with the newest JupyterLab and with the oldest
the ``lab`` extra allows (JupyterLab refuses an extension built to need newer packages).
Prints the new environment's Python last, for the browser tests
(``JUPYTER_BRAIN_LAB_PYTHON``) to run JupyterLab from it.

    python scripts/check_wheel.py [--out build/wheel-check] [--no-build-isolation] [--newest | --oldest] [--uv PATH]

``--no-build-isolation`` builds with this Python's hatchling and JupyterLab (scripts/test.sh
has them, and has built the bundles: the build hook skips Node) instead of installing them
into a throwaway build environment. ``--newest`` builds the wheel and checks it beside the
newest JupyterLab only; ``--oldest`` checks that built wheel beside the oldest JupyterLab
only (scripts/test.sh runs it in the background, beside the tests). ``--uv`` installs both
checks' environments with that uv (``uv pip install``: the same versions and files; measured
on the oldest check's environment, 4 CPU-seconds against pip's 77, or 53 with pip's
``--no-compile``). pip's install of the same requirements is what scripts/install_lab.sh
runs, and scripts/check_newcomer.py checks it on every CI run.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARE = "share/jupyter/labextensions/jupyter-brain/"


def run(cmd: list[str], **kw) -> str:
    print("+", " ".join(map(str, cmd)), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode:
        sys.exit(f"failed ({done.returncode}): {' '.join(map(str, cmd))}\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
    return done.stdout + done.stderr


def check_contents(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    data = next((n.split(SHARE)[0] for n in names if SHARE in n), None)
    if data is None:
        sys.exit(f"{wheel.name}: no {SHARE} in the wheel (was js/lab built? see js/package.json build:all)")
    need = [data + SHARE + f for f in ("install.json", "package.json", "schemas/jupyter-brain/plugin.json")]
    need += ["jupyter_brain/static/agent_view.js", "jupyter_brain/server/__init__.py"]
    if not any(n.endswith("etc/jupyter/jupyter_server_config.d/jupyter_brain.json") for n in names):
        need.append("…/etc/jupyter/jupyter_server_config.d/jupyter_brain.json")
    missing = [n for n in need if n not in names]
    if not any(n.startswith(data + SHARE + "static/remoteEntry.") for n in names):
        missing.append(data + SHARE + "static/remoteEntry.*.js")
    if missing:
        sys.exit(f"{wheel.name} lacks: {', '.join(missing)}")
    print(f"{wheel.name}: install.json and {sum(SHARE + 'static/' in n for n in names)} static files of the extension")


def oldest_jupyterlab() -> str:
    """The lowest JupyterLab the ``lab`` extra allows (``jupyterlab>=4.2`` → ``4.2``)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    spec = next(d for d in extras["lab"] if d.replace(" ", "").startswith("jupyterlab>="))
    return spec.replace(" ", "").removeprefix("jupyterlab>=").split(",")[0]


def check_listing(python: Path) -> str:
    """``jupyter labextension list`` in ``python``'s environment shows the extension
    enabled and OK (it lists an extension whose packages JupyterLab cannot satisfy with X)."""
    listing = re.sub(r"\x1b\[[0-9;]*m", "", run([str(python), "-m", "jupyter", "labextension", "list"]))
    line = next((ln.strip() for ln in listing.splitlines() if ln.strip().startswith("jupyter-brain ")), "")
    if not re.fullmatch(r"jupyter-brain v\S+ enabled OK \(python, jupyter-brain\)", line):
        sys.exit(f"jupyter labextension list does not show jupyter-brain enabled and OK:\n{listing}")
    return line


def check_server_extension(python: Path) -> str:
    """``jupyter server extension list`` shows jupyter-brain's server extension (the MCP
    endpoint for outside agents, issue #35) enabled and OK: the wheel's jupyter-config enables it."""
    listing = re.sub(r"\x1b\[[0-9;]*m", "", run([str(python), "-m", "jupyter", "server", "extension", "list"]))
    lines = [ln.strip() for ln in listing.splitlines()]
    enabled = any(re.fullmatch(r"jupyter_brain\.server enabled", ln) for ln in lines)
    ok = any(re.fullmatch(r"- Validating jupyter_brain\.server\.\.\.", ln) for ln in lines) and any(
        ln.startswith("jupyter_brain.server") and ln.endswith("OK") for ln in lines)
    if not (enabled and ok):
        sys.exit(f"jupyter server extension list does not show jupyter_brain.server enabled and OK:\n{listing}")
    return "jupyter_brain.server enabled OK"


def build_wheel(dist: Path, isolated: bool) -> Path:
    """The wheel, built into a clean ``dist`` and checked for the extension's files."""
    shutil.rmtree(dist, ignore_errors=True)
    isolation = [] if isolated else ["--no-build-isolation"]
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *isolation, "-w", str(dist), str(ROOT)])
    [wheel] = sorted(dist.glob("jupyter_brain-*.whl"))
    check_contents(wheel)
    return wheel


def fresh_venv(env: Path, *requirements: str, uv: Path | None = None) -> Path:
    """A new virtualenv at ``env`` with ``requirements`` installed by ``uv`` if given (the venv
    then has no pip: ensurepip costs 6 CPU-seconds, and nothing installs into it later), else
    by its own pip, as ``python -m venv`` makes it; its Python."""
    shutil.rmtree(env, ignore_errors=True)
    venv.create(env, with_pip=uv is None)
    python = env / "bin" / "python"
    if uv is not None:
        run([str(uv), "pip", "install", "-q", "--python", str(python), *requirements])
    else:
        run([str(python), "-m", "pip", "install", "-q", *requirements])
    return python


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "wheel-check")
    parser.add_argument("--no-build-isolation", dest="isolated", action="store_false")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--newest", action="store_true", help="build and check with the newest JupyterLab only")
    only.add_argument("--oldest", action="store_true", help="check the built wheel with the oldest JupyterLab only")
    parser.add_argument("--uv", type=Path, help="install the checks' environments with this uv instead of pip")
    args = parser.parse_args()
    dist, python = args.out / "dist", None
    if args.oldest:
        wheels = sorted(dist.glob("jupyter_brain-*.whl"))
        if len(wheels) != 1:
            sys.exit(f"--oldest checks the wheel that a run with --newest built in {dist}; found {len(wheels)}")
        wheel = wheels[0]
    else:
        wheel = build_wheel(dist, args.isolated)
        python = fresh_venv(args.out / "venv", f"{wheel}[lab]", uv=args.uv)
        print(f"jupyter labextension list: {check_listing(python)}")
        print(f"jupyter server extension list: {check_server_extension(python)}")
    if not args.newest:
        oldest = oldest_jupyterlab()
        old_python = fresh_venv(args.out / "venv-oldest-lab", f"{wheel}[lab]", f"jupyterlab=={oldest}.*", uv=args.uv)
        print(f"with JupyterLab {oldest}.* (the lab extra's oldest): {check_listing(old_python)}")
    if python is not None:
        print(python)


if __name__ == "__main__":
    main()
