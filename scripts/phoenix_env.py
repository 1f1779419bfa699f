"""Build Arize Phoenix's own virtualenv for tests/phoenix (``build/phoenix/venv``).

Phoenix pulls about 80 packages (pyarrow, grpcio, sqlalchemy, ...); kept out of the test
environment, it neither slows the other steps nor pins versions our SDKs need. The tests
start it from here as a subprocess and talk to it over HTTP only. Idempotent: a venv that
already has the pinned version is reused.

    python scripts/phoenix_env.py [--venv build/phoenix/venv] [--uv PATH]

``--uv`` installs with that uv (``uv pip install``) instead of pip: the same packages, for a
tenth of pip's CPU time (scripts/test.sh builds this venv beside its other steps). Prints
the venv's Python last.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The one place the Phoenix version is pinned (tests/phoenix reads it from here too).
PHOENIX_VERSION = "20.26.1"
PHOENIX_REQUIREMENT = f"arize-phoenix=={PHOENIX_VERSION}"
DEFAULT_VENV = ROOT / "build" / "phoenix" / "venv"


def installed_version(python: Path) -> str | None:
    """The arize-phoenix version installed in ``python``'s environment, or None."""
    if not python.exists():
        return None
    done = subprocess.run([str(python), "-c", "from importlib.metadata import version; print(version('arize-phoenix'))"],
                          capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def ensure(venv_dir: Path, uv: Path | None = None) -> Path:
    """A venv at ``venv_dir`` with the pinned Phoenix (installed by ``uv`` if given, else
    pip); its Python."""
    python = venv_dir / "bin" / "python"
    have = installed_version(python)
    if have == PHOENIX_VERSION:
        print(f"{venv_dir}: arize-phoenix {have} already installed", flush=True)
        return python
    if not python.exists():
        print(f"{venv_dir}: creating the virtualenv", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)  # pip too: a later run may not pass --uv
    print(f"{venv_dir}: installing {PHOENIX_REQUIREMENT} (was {have or 'absent'})", flush=True)
    if uv is not None:
        install = [str(uv), "pip", "install", "-q", "--python", str(python)]
    else:
        install = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*install, PHOENIX_REQUIREMENT], check=True)
    if installed_version(python) != PHOENIX_VERSION:
        sys.exit(f"{venv_dir}: arize-phoenix {PHOENIX_VERSION} did not install")
    return python


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--uv", type=Path, help="install with this uv instead of pip")
    args = parser.parse_args()
    print(ensure(args.venv.resolve(), args.uv))


if __name__ == "__main__":
    main()
