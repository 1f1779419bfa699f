"""Input tokens per task: jupyter-brain beside smolagents and pydantic-ai, same task, same run.

Issue #26 §5. One scripted 3-step data task — read ``sales.csv``, compute the region with the
highest total in Python, answer — is run by each framework against ONE local
OpenAI-compatible HTTP server started here (``tokens_server.py``). The server records every
request body and answers from the same script for all: the file-reading tool call, the
Python tool call, the answer. When a framework's request does not offer the tool the next
step needs but offers a tool loader (jupyter-brain's ``find_tools``), the scripted model
calls the loader first, so deferral is paid for in the figures, never hidden.

* **jupyter-brain**: a real ``%%agent`` cell in an IPython shell, with the defaults a user
  gets (every built-in tool, MCP and ``@tool`` ones if configured, the workspace context,
  the runtime message, streaming); only ``run_python`` is allowed without a card
  (``%agent allow run_python``), as nobody is there to click.
* **smolagents** ``ToolCallingAgent`` (1.26.0): the JSON tool-calling agent, the kind that
  sends ``tools=`` like we do (``CodeAgent`` sends no tools: it asks for code in the
  text), with two tools, ``read_file`` and ``run_python``; it answers through its
  ``final_answer`` tool.
* **pydantic-ai** ``Agent`` (pydantic-ai-slim 2.68.0) with the same two tools.

The peers run in their own venv (never the project's test dependencies)::

    python -m venv /tmp/peers
    /tmp/peers/bin/pip install "smolagents[openai]==1.26.0" "pydantic-ai-slim[openai]==2.68.0"

``--peers-python`` names its interpreter (default ``/tmp/peers/bin/python``); the venv is
created with those pins when it does not exist.

Counting rule: o200k_base (tiktoken) over the compact JSON
(``json.dumps(x, ensure_ascii=False, separators=(",", ":"))``) of each request's
``messages`` plus, when present, its ``tools`` — exactly what the framework sent, the
request's other keys (model, stream, temperature) left out. o200k's table is not bundled
with tiktoken: it is rebuilt from the npm package ``js-tiktoken@1.0.21`` (``npm pack``) and
checked by tiktoken against the table's published sha256, so the count is o200k exactly.

    python benchmarks/tokens_vs_peers.py [--peers-python /tmp/peers/bin/python] [--show-requests] [--max-tools N]

Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tokens_server import CODE, CSV, PROMPT, ScriptServer, o200k

PEERS_PINS = ("smolagents[openai]==1.26.0", "pydantic-ai-slim[openai]==2.68.0")
PEERS_SCRIPT = Path(__file__).resolve().parent / "tokens_peers.py"


def count_request(encode: Any, body: dict[str, Any]) -> int:
    """The counting rule: messages + tools, compact JSON, o200k."""
    def text(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    tokens = len(encode(text(body.get("messages", []))))
    if body.get("tools"):
        tokens += len(encode(text(body["tools"])))
    return tokens


def run_jupyter_brain(base_url: str, folder: Path, max_tools: int | None = None) -> str:
    """One ``%%agent`` cell with the defaults, in an IPython shell (no kernel needed);
    ``max_tools``: ``%agent config max_tools=N`` first (None: the default)."""
    from IPython.core.interactiveshell import InteractiveShell

    os.chdir(folder)
    os.environ.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-benchmark")  # as a user sets them
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "jupyter_brain")
    shell.run_line_magic("config", f"AgentMagics.data_dir = {str(folder / '.jupyter_brain')!r}")
    shell.run_line_magic("agent", "allow run_python")
    if max_tools is not None:
        with contextlib.redirect_stdout(io.StringIO()):
            shell.run_line_magic("agent", f"config max_tools={max_tools}")
    with contextlib.redirect_stdout(io.StringIO()):  # the turn's text view
        shell.run_cell_magic("agent", "--provider openai --model gpt-4o", PROMPT)
    result = shell.user_ns["_agent"]
    if result.status != "completed":
        raise SystemExit(f"jupyter-brain's turn ended {result.status}: {result.error}")
    return str(result.text)


def ensure_peers(python: str) -> None:
    if Path(python).exists():
        return
    venv = Path(python).parent.parent
    print(f"creating the peers' venv at {venv} ({', '.join(PEERS_PINS)})", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", *PEERS_PINS], check=True)


def run_peer(python: str, framework: str, base_url: str, folder: Path) -> str:
    done = subprocess.run([python, str(PEERS_SCRIPT), framework, base_url], cwd=folder,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"})
    if done.returncode != 0:
        raise SystemExit(f"{framework} failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers-python", default="/tmp/peers/bin/python")
    parser.add_argument("--show-requests", action="store_true", help="print each request's token split")
    parser.add_argument("--max-tools", type=int, default=None,
                        help="run jupyter-brain with %%agent config max_tools=N (0: every tool; default: the default)")
    args = parser.parse_args()
    encode = o200k().encode_ordinary
    ensure_peers(args.peers_python)
    folder = Path(tempfile.mkdtemp(prefix="tokens-task-"))
    (folder / "sales.csv").write_text(CSV, encoding="utf-8")
    answers: dict[str, str] = {}
    with ScriptServer() as server:
        answers["jupyter-brain"] = run_jupyter_brain(server.url("jupyter-brain"), folder, args.max_tools)
        for peer in ("smolagents", "pydantic-ai"):
            answers[peer] = run_peer(args.peers_python, peer, server.url(peer), folder)
        bodies = server.bodies
    rows = {name: [count_request(encode, body) for body in bodies.get(name, [])] for name in answers}
    base = sum(rows["smolagents"]) or 1
    print(f"task: {PROMPT!r} (3 steps; the Python step runs {len(CODE.splitlines())} lines)")
    print("tokens: o200k_base over the compact JSON of each request's messages + tools\n")
    print(f"{'framework':<15}{'requests':>9}{'input tokens per task':>23}{'vs smolagents':>15}   tools offered")
    for name, counts in rows.items():
        tools = [sorted(t.get("function", t).get("name", "?") for t in body.get("tools") or [])
                 for body in bodies[name]]
        offered = " | ".join(",".join(t) for t in tools)
        print(f"{name:<15}{len(counts):>9}{sum(counts):>23,}{sum(counts) / base:>14.2f}x   {offered}")
    if args.show_requests:
        for name, counts in rows.items():
            for body, n in zip(bodies[name], counts, strict=True):
                tools_n = len(encode(json.dumps(body.get("tools") or [], ensure_ascii=False, separators=(",", ":"))))
                print(f"  {name}: {n:,} tokens ({tools_n:,} of them tools), {len(body['messages'])} messages")
    for name, answer in answers.items():
        if "West" not in answer:
            print(f"warning: {name} answered {answer!r}", file=sys.stderr)


if __name__ == "__main__":
    main()
