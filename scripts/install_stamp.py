"""Whether the launcher's virtualenv still matches what it was installed from.

``bash scripts/lab.sh`` used to reinstall everything on every launch (pip, the build
dependencies, ``npm ci``, the JavaScript build, the editable install): 48 s on an idle
machine before JupyterLab opened. Python code needs no reinstall (the install is
editable); what does is listed here: pyproject.toml, the JavaScript sources and lockfiles
under js/ (built into jupyter_brain/static and the JupyterLab extension), the install
scripts, the Python that runs the virtualenv, and the folder the editable install points
to. scripts/install_lab.sh records their digests in a stamp inside the virtualenv after
a successful install, and skips the install while they are unchanged and what it built
is still there.

    python scripts/install_stamp.py check VENV   # exit 0: up to date; 1: install (prints why)
    python scripts/install_stamp.py begin VENV   # before installing: forget the old stamp
    python scripts/install_stamp.py done VENV SECONDS  # after installing: keep the stamp

Run with the virtualenv's own Python (its version is one of the inputs).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORMAT = 1
STAMP = ".jupyter-brain-install.json"
PENDING = ".jupyter-brain-install.pending.json"

INPUT_FILES = (
    "pyproject.toml",
    "install.json",
    "scripts/install_lab.sh",
    "scripts/extra_requirements.py",
    "scripts/install_stamp.py",
    "scripts/lab_settings.json",
)
INPUT_TREE = "js"
# Under js/: what npm installs and what the build writes (as .gitignore lists them), and
# the tests, which the build does not read.
NOT_INPUTS = (
    "*/node_modules/*",
    "js/lab/lib/*",
    "js/lab/tsconfig.tsbuildinfo",
    "js/src/generated/*",
    "js/lab/view/*.js",
    "js/lab/view/*.css",
    "js/test/*",
    "js/lab/test/*",
)
# What the install builds or installs: if one is gone, install again.
OUTPUTS = (
    "jupyter_brain/static/agent_view.js",
    "jupyter_brain/static/compare_view.js",
    "jupyter_brain/labextension/package.json",
)


def input_paths(root: Path = ROOT) -> list[str]:
    """The files an install is made from, relative to ``root``, sorted."""
    paths = [name for name in INPUT_FILES if (root / name).is_file()]
    for folder, dirs, files in os.walk(root / INPUT_TREE):
        dirs[:] = [d for d in dirs if d != "node_modules"]
        for name in files:
            rel = (Path(folder) / name).relative_to(root).as_posix()
            if not any(fnmatch.fnmatch(rel, pattern) for pattern in NOT_INPUTS):
                paths.append(rel)
    return sorted(paths)


def digests(root: Path = ROOT) -> dict[str, str]:
    """Each input's digest, and the Python and folder the install belongs to."""
    found = {rel: hashlib.sha256((root / rel).read_bytes()).hexdigest() for rel in input_paths(root)}
    found["(python)"] = f"{sys.version.split()[0]} {os.path.realpath(sys.executable)}"
    found["(folder)"] = str(root.resolve())
    return found


def why_install(venv: Path, root: Path = ROOT) -> str | None:
    """None when the last install into ``venv`` was made from what ``root`` holds now;
    otherwise why it must run again, in a few words."""
    try:
        stamp = json.loads((venv / STAMP).read_text())
    except (OSError, ValueError):
        return "no finished install recorded in it"
    if not isinstance(stamp, dict) or stamp.get("format") != FORMAT or not isinstance(stamp.get("inputs"), dict):
        return "the launcher changed how it records installs"
    missing = [rel for rel in OUTPUTS if not (root / rel).is_file()]
    if not (venv / "bin" / "jupyter").exists():
        missing.insert(0, f"{venv.name}/bin/jupyter")
    if missing:
        return f"{missing[0]} is missing"
    return changed(stamp["inputs"], digests(root))


def changed(before: dict[str, str], now: dict[str, str]) -> str | None:
    """What differs between two digests, in a few words (None: nothing)."""
    if before.get("(python)") != now["(python)"]:
        return f"its Python changed ({before.get('(python)', '?').split()[0]} -> {now['(python)'].split()[0]})"
    if before.get("(folder)") != now["(folder)"]:
        return f"the checkout moved (from {before.get('(folder)')})"
    differ = sorted(rel for rel in before.keys() | now.keys() if before.get(rel) != now.get(rel))
    if not differ:
        return None
    more = f" and {len(differ) - 1} more" if len(differ) > 1 else ""
    return f"{differ[0]}{more} changed"


def begin(venv: Path, root: Path = ROOT) -> None:
    """Before an install: the old stamp goes (an install that fails leaves none), and the
    inputs are recorded as they are now (one edited during the install triggers the next)."""
    (venv / STAMP).unlink(missing_ok=True)
    (venv / PENDING).write_text(json.dumps({"format": FORMAT, "inputs": digests(root)}))


def finish(venv: Path, seconds: float, root: Path = ROOT) -> None:
    """After a successful install: the inputs ``begin`` recorded become the stamp. Unless
    the front-end is missing: the build hook only warns when its npm build fails in an
    editable install, and the views would then be missing without a word."""
    missing = [rel for rel in OUTPUTS if not (root / rel).is_file()]
    if missing:
        sys.exit(f"jupyter-brain: the install did not build {missing[0]} (see npm's output above)")
    stamp = json.loads((venv / PENDING).read_text())
    stamp.update(seconds=seconds, finished=time.time())
    (venv / STAMP).write_text(json.dumps(stamp, indent=1, sort_keys=True))
    (venv / PENDING).unlink()


def ago(seconds: float) -> str:
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if unit == 'day' and count > 1 else ''} ago"
    return "just now"


def main() -> None:
    if len(sys.argv) < 3 or sys.argv[1] not in ("check", "begin", "done"):
        sys.exit("usage: python scripts/install_stamp.py {check,begin,done} VENV [SECONDS]")
    command, venv = sys.argv[1], Path(sys.argv[2])
    if command == "begin":
        begin(venv)
    elif command == "done":
        finish(venv, float(sys.argv[3]) if len(sys.argv) > 3 else 0.0)
    elif (why := why_install(venv)) is not None:
        print(why)
        sys.exit(1)
    else:
        stamp = json.loads((venv / STAMP).read_text())
        print(f"{venv.name} matches this tree (installed {ago(time.time() - stamp['finished'])}, "
              f"in {stamp['seconds']:.0f} s): nothing to install")


if __name__ == "__main__":
    main()
