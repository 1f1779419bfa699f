"""Build the environment ``bash scripts/lab.sh`` builds, and run every example notebook in it.

What a newcomer does on a fresh clone: ``bash scripts/lab.sh``, then Run All on each
notebook. This installs the same way, with scripts/install_lab.sh (the install part of
lab.sh), into a fresh virtualenv (build/newcomer/venv), then executes each
``notebooks/*.ipynb`` with nbclient and that environment's own Python and kernel, in the
notebook's folder, offline (API keys removed: the notebooks' scripted models answer).
Any cell that raises fails the check, named by notebook, cell and error; so does an output
that reports a missing module (an agent's tool call that could not import one).

    python3 scripts/check_newcomer.py [--venv build/newcomer/venv] [--reuse] [notebooks/NAME.ipynb ...]

``--reuse`` keeps an existing virtualenv (install_lab.sh still runs: it skips the
install when nothing it is made from changed, scripts/install_stamp.py).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "JUPYTER_BRAIN_BASE_URL")
MISSING_MODULE = ("ModuleNotFoundError", "No module named")
TEXT_OUTPUTS = ("text/plain", "text/markdown")


def where(nb, index: int | None) -> str:
    """``cell 3 ('import pandas as pd')``: the cell's place among all cells, from 1, and its first line."""
    if index is None:
        return "a cell"
    line = next((ln for ln in nb.cells[index].source.splitlines() if ln.strip()), "")
    if len(line) > 70:
        line = line[:67] + "..."
    return f"cell {index + 1} ({line!r})"


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


def run_notebook(path: Path) -> list[str]:
    """Execute ``path`` as Run All does; the problems found, one line each."""
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
    return problems


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
