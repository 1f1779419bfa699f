"""How long ``bash scripts/lab.sh`` takes until JupyterLab answers, the first time and the second.

The first launch installs into a fresh virtualenv (the baseline, measured in the same run);
the second, on the unchanged tree, should skip the install (goal: JupyterLab answers
within 15 s); then the venv's ``jupyter lab`` alone, without the launcher, shows the floor
(what JupyterLab itself takes on this machine now). With ``--changed``, a third launch after an install input changed (a byte
appended to js/package.json, then put back) shows the install coming back. Each launch runs
the launcher as a user does, with arguments passed through to JupyterLab (a free port, a
token, no browser), and is timed until ``/lab`` answers HTTP 200; then it is stopped.
Prints; asserts nothing.

    python benchmarks/second_launch.py [--venv build/bench/second_launch/venv] [--reuse] [--changed] [-- ARG ...]

``--reuse`` keeps the virtualenv (the "first" launch is then not a fresh install).
Arguments after ``--`` go to lab.sh, i.e. to JupyterLab, after the benchmark's own.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch(venv: Path, extra: list[str], log: Path, timeout: float, alone: bool = False) -> tuple[float, str]:
    """Seconds from ``bash scripts/lab.sh`` until JupyterLab serves /lab, and the launcher's
    first line (what it said it was doing; an older launcher's first line of output).
    ``alone``: the venv's ``jupyter lab`` itself, without the launcher (the floor)."""
    port, token = free_port(), secrets.token_hex(8)
    if alone:
        as_root = ["--allow-root"] if os.geteuid() == 0 else []
        command = [str(venv / "bin" / "jupyter"), "lab", "--notebook-dir=notebooks", *as_root]
    else:
        command = ["bash", str(ROOT / "scripts" / "lab.sh")]
    args = [*command, "--no-browser", f"--port={port}", "--ip=127.0.0.1", f"--IdentityProvider.token={token}", *extra]
    env = {**os.environ, "VENV": str(venv)}
    start = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while True:
                if proc.poll() is not None:
                    sys.exit(f"lab.sh ended with {proc.returncode} before JupyterLab answered; see {log}")
                if time.monotonic() - start > timeout:
                    sys.exit(f"JupyterLab did not answer within {timeout:.0f} s; see {log}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=2) as page:
                        if page.status == 200:
                            break
                except (urllib.error.URLError, OSError):
                    pass
                time.sleep(0.1)
            elapsed = time.monotonic() - start
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)  # its own session: the launcher and JupyterLab
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
    lines = [ln for ln in log.read_text().splitlines() if ln.strip()]
    said = next((ln for ln in lines if ln.startswith("jupyter-brain")), lines[0] if lines else "")
    return elapsed, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=ROOT / "build" / "bench" / "second_launch" / "venv")
    parser.add_argument("--reuse", action="store_true", help="keep an existing virtualenv")
    parser.add_argument("--changed", action="store_true", help="a third launch after an install input changed")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds to wait for each launch")
    parser.add_argument("extra", nargs="*", help="after --: more arguments for lab.sh")
    args = parser.parse_args()
    venv = args.venv.resolve()
    if not args.reuse:
        shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    logs = venv.parent

    runs = [("first launch" + ("" if args.reuse else " (fresh venv)"), logs / "first.log"),
            ("second launch (unchanged tree)", logs / "second.log")]
    figures = []
    for name, log in runs:
        figures.append((name, *launch(venv, args.extra, log, args.timeout)))
    figures.append(("JupyterLab alone (no launcher)", *launch(venv, args.extra, logs / "alone.log", args.timeout, alone=True)))
    if args.changed:
        package = ROOT / "js" / "package.json"
        original = package.read_bytes()
        package.write_bytes(original + b"\n")
        try:
            figures.append(("after js/package.json changed", *launch(venv, args.extra, logs / "changed.log", args.timeout)))
        finally:
            package.write_bytes(original)

    print(f"bash scripts/lab.sh until JupyterLab answers /lab (venv {venv}; logs beside it)")
    for name, seconds, said in figures:
        print(f"  {name:<34} {seconds:7.1f} s   {said[:100]}")
    first, second = figures[0][1], figures[1][1]
    alone = figures[2][1]
    print(f"  second / first: {second / first:.2f}; second - JupyterLab alone: {second - alone:+.1f} s"
          "   (goal: the second within 15 s)")


if __name__ == "__main__":
    main()
