"""Build the environment ``bash scripts/lab.sh`` builds, and run every example notebook in it.

What a newcomer does on a fresh clone: ``bash scripts/lab.sh``, then Run All on each
notebook. This installs the same way, with scripts/install_lab.sh (the install part of
lab.sh), into a fresh virtualenv (build/newcomer/venv), then executes each
``notebooks/*.ipynb`` with nbclient and that environment's own Python and kernel, in the
notebook's folder, offline (API keys removed: the notebooks' scripted models answer).
Any cell that raises fails the check, named by notebook, cell and error; so does an output
that reports a missing module (an agent's tool call that could not import one).

Offline is checked, not assumed: a guard run first in each kernel refuses and records every
connection that is not to this machine, and a check run last fails on any such attempt, on a
live model chosen without a key and on an unfinished last turn; every finished turn's header
must name a scripted model or a replay, and every recording a scripted provider. (This was a
fifth run of every notebook in tests/test_notebooks_meta.py; it is folded in here, where the
notebooks already run, in the environment a user gets.)

    python3 scripts/check_newcomer.py [--venv build/newcomer/venv] [--reuse] [notebooks/NAME.ipynb ...]

``--reuse`` keeps an existing virtualenv (install_lab.sh still runs: it skips the
install when nothing it is made from changed, scripts/install_stamp.py).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "JUPYTER_BRAIN_BASE_URL")
MISSING_MODULE = ("ModuleNotFoundError", "No module named")
TEXT_OUTPUTS = ("text/plain", "text/markdown")
# ZMQ, which the kernel talks over, does not use Python sockets: only the notebook's own
# connections (the SDKs', httpx's, urllib's) meet the guard.
NETWORK_GUARD = """
import socket as _jb_socket
_jb_network_attempts = []
_jb_local = ("127.0.0.1", "::1", "localhost")
_jb_connect, _jb_getaddrinfo = _jb_socket.socket.connect, _jb_socket.getaddrinfo
def _jb_guarded_connect(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and not host.startswith("/") and host not in _jb_local:
        _jb_network_attempts.append(host)
        raise OSError(f"network disabled by check_newcomer: {host}")
    return _jb_connect(self, address)
def _jb_guarded_getaddrinfo(host, *args, **kwargs):
    if host not in _jb_local and host is not None:
        _jb_network_attempts.append(host)
        raise OSError(f"network disabled by check_newcomer: {host}")
    return _jb_getaddrinfo(host, *args, **kwargs)
_jb_socket.socket.connect = _jb_guarded_connect
_jb_socket.getaddrinfo = _jb_guarded_getaddrinfo
"""
OFFLINE_CHECK = """
assert not _jb_network_attempts, f"the notebook tried to reach {sorted(set(_jb_network_attempts))}"
from demo_models import live
assert not live(), "a live model was chosen without a key"
assert _agent.status == "completed", f"the last turn ended {_agent.status!r}"
"""
# A finished turn's header in its Markdown: "### Agent — Turn 1 · LABEL · …".
TURN_LABEL = re.compile(r"^### Agent \u2014 Turn \d+ \u00b7 (\S+)", re.M)


def where(nb, index: int | None) -> str:
    """``cell 3 ('import pandas as pd')``: the cell's place among the notebook's own cells, from
    1, and its first line (``nb`` has the guard first and the offline check last)."""
    if index is None:
        return "a cell"
    if index == 0:
        return "the network guard run first"
    if index == len(nb.cells) - 1:
        return "the offline check run last"
    line = next((ln for ln in nb.cells[index].source.splitlines() if ln.strip()), "")
    if len(line) > 70:
        line = line[:67] + "..."
    return f"cell {index} ({line!r})"


def output_texts(cell):
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            yield out.text
        for mime in TEXT_OUTPUTS:
            if mime in out.get("data", {}):
                yield out.data[mime]


def shown(path: Path) -> str:
    return os.path.relpath(path, ROOT)


def check_kernel(name: str) -> None:
    """The kernel a notebook asks for must run this environment's Python (a kernelspec of
    the same name elsewhere on the machine, e.g. under ~/.local/share/jupyter, would win)."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec(name)
    exe = spec.argv[0]
    python_names = {"python", f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info[:2])}
    if exe not in python_names and Path(exe).absolute() != Path(sys.executable).absolute():
        sys.exit(f"kernel {name!r} ({spec.resource_dir}) runs {exe}, not this environment's {sys.executable}")


def answered_offline(nb) -> list[str]:
    """Problems with who answered: every finished turn's header names a scripted model or a
    replay (``replayed/<model>``: an unchanged cell replays its saved recording), and every
    recording was made by a scripted provider: no live model answered, now or when recorded."""
    agent_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.lstrip().startswith("%%agent")]
    if not agent_cells:
        return []
    outputs = [out for cell in agent_cells for out in cell.get("outputs", [])]
    labels = {m.group(1) for out in outputs
              for m in TURN_LABEL.finditer("".join(out.get("data", {}).get("text/markdown", "")))}
    recorded_by = {str(out["metadata"]["jupyter_brain"]["recording"].get("provider")) for out in outputs
                   if "recording" in out.get("metadata", {}).get("jupyter_brain", {})}
    problems = []
    if not labels:
        problems.append("no %%agent cell shows a finished turn")
    problems += [f"a turn was answered by {label}" for label in sorted(labels)
                 if not label.startswith(("scripted", "replayed/"))]
    if not recorded_by:
        problems.append("no %%agent cell's output carries its recording")
    problems += [f"a turn was recorded from {p}" for p in sorted(recorded_by) if not p.startswith("scripted")]
    return problems


def run_notebook(path: Path) -> list[str]:
    """Execute ``path`` as Run All does, offline; the problems found, one line each."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    class Client(NotebookClient):
        """Remembers which cell runs, to name it when the kernel dies or times out."""

        running: int | None = None

        async def async_execute_cell(self, cell, cell_index, *args, **kwargs):
            self.running = cell_index
            return await super().async_execute_cell(cell, cell_index, *args, **kwargs)

    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(NETWORK_GUARD))
    nb.cells.append(nbformat.v4.new_code_cell(OFFLINE_CHECK))
    kernel = nb.metadata.get("kernelspec", {}).get("name", "python3")
    check_kernel(kernel)
    client = Client(nb, timeout=600, kernel_name=kernel, resources={"metadata": {"path": str(path.parent)}})
    problems = []
    try:
        client.execute()
    except CellExecutionError as exc:
        problems.append(f"{where(nb, client.running)} raised {exc.ename}: {exc.evalue}")
    except (CellTimeoutError, DeadKernelError) as exc:
        problems.append(f"{where(nb, client.running)}: {type(exc).__name__}: {str(exc).strip().splitlines()[0]}")
    for i, cell in enumerate(nb.cells):
        for text in output_texts(cell):
            hit = next((ln.strip() for ln in text.splitlines() if any(m in ln for m in MISSING_MODULE)), None)
            if hit:
                problems.append(f"{where(nb, i)} shows: {hit[:200]}")
                break
    return problems + answered_offline(nb)


def run_notebooks(paths: list[Path]) -> None:
    """Inside the newcomer environment: run each notebook, then report every failure."""
    failures = []
    for path in paths:
        start = time.monotonic()
        problems = run_notebook(path)
        status = "FAILED" if problems else "ok"
        print(f"{shown(path)}: {status} ({time.monotonic() - start:.0f} s)", flush=True)
        failures += [f"{shown(path)}: {p}" for p in problems]
    if failures:
        sys.exit("Example notebooks that fail in the environment of scripts/lab.sh:\n  " + "\n  ".join(failures))
    print(f"all {len(paths)} notebooks ran in the environment of scripts/lab.sh")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/*.ipynb")
    parser.add_argument("--venv", type=Path, default=ROOT / "build" / "newcomer" / "venv")
    parser.add_argument("--reuse", action="store_true", help="keep an existing virtualenv")
    parser.add_argument("--in-env", action="store_true", help=argparse.SUPPRESS)  # the second half, in the venv
    args = parser.parse_args()
    for key in KEYS:
        os.environ.pop(key, None)
    paths = [p.resolve() for p in args.notebooks] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    if args.in_env:
        run_notebooks(paths)
        return

    venv = args.venv.resolve()
    if not args.reuse:
        shutil.rmtree(venv, ignore_errors=True)
    start = time.monotonic()
    print(f"+ bash scripts/install_lab.sh {venv}", flush=True)
    if subprocess.run(["bash", str(ROOT / "scripts" / "install_lab.sh"), str(venv)]).returncode:
        sys.exit("scripts/install_lab.sh failed: the environment of scripts/lab.sh does not install")
    print(f"installed in {time.monotonic() - start:.0f} s", flush=True)
    python = venv / "bin" / "python"
    done = subprocess.run([str(python), __file__, "--in-env", *map(str, paths)], cwd=ROOT)
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
