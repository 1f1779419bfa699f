"""One benchmark, two revisions of the package, in the same run: a change's "before" and
"after" measured on the same machine at the same load, taking turns so that a burst of
load elsewhere falls on both.

Each revision is checked out into a temporary git worktree; the benchmark script of the
*after* revision runs against each tree's package (``PYTHONPATH``), so both are measured
by the same code; the built front-end (gitignored) is copied from this tree into both. The benchmark's own output is printed, labelled; its figures are the
result (this script asserts nothing).

    python benchmarks/revisions.py --before 1666010 --after HEAD --rounds 2 -- \\
        benchmarks/overhead.py --repeats 3 --one-cpu
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


BUILD_OUTPUT = ("jupyter_brain/static", "jupyter_brain/labextension")  # gitignored: not in a checkout


def checkout(revision: str, where: Path) -> Path:
    """``revision`` in a worktree at ``where``, with this tree's built front-end copied in:
    without it the kernel shows plain text instead of the widget, which is not what is measured."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(where), revision], check=True)
    for folder in BUILD_OUTPUT:
        if (ROOT / folder).is_dir():
            shutil.copytree(ROOT / folder, where / folder, dirs_exist_ok=True)
    return where


def run(tree: Path, script: Path, args: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, str(script), *args], env=env, capture_output=True, text=True, cwd=tree)
    return done.stdout + (f"\n[exit {done.returncode}]\n{done.stderr[-2000:]}" if done.returncode else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the revision before the change")
    parser.add_argument("--after", default="HEAD", help="the revision after it (default HEAD)")
    parser.add_argument("--rounds", type=int, default=2, help="before/after pairs, taking turns")
    parser.add_argument("script", help="the benchmark script (path in the repository)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    ns = parser.parse_args()
    args = [a for a in ns.args if a != "--"]
    with tempfile.TemporaryDirectory(prefix="jb-revisions-") as tmp:
        trees = {label: checkout(rev, Path(tmp) / label) for label, rev in (("before", ns.before), ("after", ns.after))}
        try:
            script = trees["after"] / ns.script
            for round_ in range(1, ns.rounds + 1):
                for label, tree in trees.items():
                    rev = subprocess.run(["git", "-C", str(tree), "log", "-1", "--format=%h %s"],
                                         capture_output=True, text=True).stdout.strip()[:90]
                    print(f"=== round {round_}, {label}: {rev}", flush=True)
                    print(run(tree, script, args), flush=True)
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


if __name__ == "__main__":
    main()
