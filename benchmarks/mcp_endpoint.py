"""jupyter-brain's MCP endpoint for outside agents (issue #35): what reading costs, what running
adds, and many clients at once. Prints figures beside a baseline measured in the same run;
asserts nothing.

* **Tokens to read a notebook**: a 100-cell notebook with 5 figures and 3 wide DataFrames, read
  whole by our ``read_notebook`` and by jupyter-mcp-server 2.2.4's (pip, its own venv: pass
  ``--peer-python /tmp/jms-venv/bin/python``), o200k tokens. An image block is counted as a
  vision model bills it (Claude: width × height / 750), a base64 string inside text as text.
  Goal: ours ≤ 0.5× theirs.
* **Overhead**: ``execute_cell`` of a one-line cell through the endpoint (HTTP, MCP, the gate,
  the notebook read and its outputs recorded; the file is saved just after the answer) against the same code through ``jupyter_client`` directly, p50.
  Goal: ≤ 20 ms more.
* **Concurrency**: 10 clients × 20 operations (insert a cell, run it) on one notebook at once:
  every edit is there, every run's output saved, ``nbformat.validate`` passes.

    python benchmarks/mcp_endpoint.py [--runs 40] [--peer-python /tmp/jms-venv/bin/python]
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
import nbformat

from benchmarks.tokens_server import o200k
from tests.server.jupyter import RunningServer, _call_tools, saved_notebook, start_server, write_notebook

HERE = Path(__file__).resolve().parent


# the notebook ---------------------------------------------------------------------------------
def build_notebook(path: Path) -> None:
    """100 cells: markdown and code with short outputs, 5 matplotlib figures, 3 wide DataFrames
    (30 columns × 8 rows, saved as Jupyter saves them: HTML and plain text)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    figures, frames = {10, 30, 50, 70, 90}, {20, 40, 60}
    for i in range(100):
        if i % 5 == 0 and i not in figures and i not in frames:
            nb.cells.append(nbformat.v4.new_markdown_cell(f"## Step {i // 5}\nWhat this step computes, and why."))
            continue
        if i in figures:
            fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=100)
            ax.plot(rng.normal(size=200).cumsum())
            ax.set_title(f"walk {i}")
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png")
            plt.close(fig)
            data = {"image/png": base64.b64encode(buffer.getvalue()).decode(), "text/plain": "<Figure size 640x480 with 1 Axes>"}
            cell = nbformat.v4.new_code_cell(f"plt.plot(walk_{i}.cumsum()); plt.title('walk {i}')")
            cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
        elif i in frames:
            df = pd.DataFrame(rng.normal(size=(8, 30)).round(4), columns=[f"feature_{c:02d}" for c in range(30)])
            data = {"text/html": df._repr_html_(), "text/plain": repr(df)}
            cell = nbformat.v4.new_code_cell(f"frame_{i} = make_frame({i})\nframe_{i}.head(8)")
            cell.outputs = [nbformat.v4.new_output("execute_result", data=data, execution_count=i)]
        else:
            cell = nbformat.v4.new_code_cell(f"value_{i} = compute({i})\nprint('value', value_{i})")
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"value {i * 3.14159:.5f}\n")]
        cell.execution_count = i
        nb.cells.append(cell)
    nbformat.write(nb, path)


def count_tokens(text: str, images: list[tuple[int, int]], encoding: Any) -> int:
    return len(encoding.encode(text, disallowed_special=())) + sum(w * h // 750 for w, h in images)


def image_sizes(blocks: list[Any]) -> list[tuple[int, int]]:
    from PIL import Image

    return [Image.open(io.BytesIO(base64.b64decode(b.data))).size for b in blocks]


# ours -----------------------------------------------------------------------------------------
def our_read(server: RunningServer) -> tuple[str, list[Any]]:
    reply = anyio.run(_call_tools, server, [("read_notebook", {"path": "bench.ipynb"})], "bench", None)[0]
    return reply.text, reply.images


# theirs: jupyter-mcp-server 2.2.4 as a Jupyter server extension, in its own venv -----------------
PEER_CLIENT = r"""
import anyio, httpx2, json, sys
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

async def main(url, token, calls):
    async with httpx2.AsyncClient(headers={"Authorization": f"token {token}"}, timeout=httpx2.Timeout(60, read=600)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            out = []
            for name, args in calls:
                res = await client.call_tool(name, args)
                out.append([{"type": b.type, "text": getattr(b, "text", None), "data": getattr(b, "data", None)}
                            for b in res.content])
            print(json.dumps({"tools": tools, "results": out}))

anyio.run(main, sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
"""


def peer_read(peer_python: str, root: Path) -> dict[str, Any] | str:
    """jupyter-mcp-server's reads of the same file (its ``read_notebook`` shows sources only, so
    the outputs take a ``read_cell`` per cell), or why it could not be measured."""
    import httpx

    from tests.server.jupyter import free_port

    port, token = free_port(), "peer-token-123456"
    log = root.parent / "peer-server.log"
    command = [peer_python, "-m", "jupyter_server", "--no-browser", "--allow-root", f"--port={port}",
               "--port-retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}"]
    process = subprocess.Popen(command, cwd=root, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        for _ in range(600):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/status", headers={"Authorization": f"token {token}"},
                             timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        else:
            return "their server did not start: " + log.read_text()[-500:]
        calls = [["use_notebook", {"notebook_name": "bench", "notebook_path": "bench.ipynb"}],
                 ["read_notebook", {"notebook_name": "bench", "response_format": "detailed", "limit": 0}]]
        calls += [["read_cell", {"notebook_name": "bench", "cell_index": i, "include_outputs": True}] for i in range(100)]
        done = subprocess.run([peer_python, "-c", PEER_CLIENT, f"http://127.0.0.1:{port}/mcp", token, json.dumps(calls)],
                              capture_output=True, text=True, timeout=900)
        if done.returncode:
            return "their client failed: " + done.stderr[-800:]
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        return {"tools": answer["tools"], "use": answer["results"][0], "sources": answer["results"][1],
                "cells": answer["results"][2:]}
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()


def blocks_tokens(blocks: list[dict[str, Any]], encoding: Any) -> tuple[int, int]:
    """(o200k tokens, images) of a result's content blocks."""
    text = "\n".join(b["text"] or "" for b in blocks if b["type"] == "text")
    images = [b for b in blocks if b["type"] == "image"]
    sizes = image_sizes([type("Block", (), {"data": b["data"]})() for b in images])
    return count_tokens(text, sizes, encoding), len(images)


# overhead ---------------------------------------------------------------------------------------
def endpoint_times(server: RunningServer, runs: int) -> list[float]:
    write_notebook(server.root / "timing.ipynb", ["x = 1"])

    async def timed() -> list[float]:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async with httpx2.AsyncClient(headers={"Authorization": f"token {server.token}"},
                                      timeout=httpx2.Timeout(30, read=300)) as http:
            async with Client(streamable_http_client(server.endpoint, http_client=http)) as client:
                for _ in range(3):  # the kernel starts, the client warms up
                    await client.call_tool("execute_cell", {"path": "timing.ipynb", "index": 0})
                times = []
                for _ in range(runs):
                    start = time.perf_counter()
                    await client.call_tool("execute_cell", {"path": "timing.ipynb", "index": 0})
                    times.append(time.perf_counter() - start)
                return times

    return anyio.run(timed)


def direct_times(runs: int) -> list[float]:
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        for _ in range(3):
            client.execute_interactive("x = 1", timeout=60)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            client.execute_interactive("x = 1", timeout=60)
            times.append(time.perf_counter() - start)
        return times
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


# concurrency --------------------------------------------------------------------------------------
def concurrency(server: RunningServer, clients: int, operations: int) -> dict[str, Any]:
    write_notebook(server.root / "busy.ipynb", ["start = 0"])
    errors: list[str] = []

    async def one(client: int) -> None:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp_types import Implementation

        async with httpx2.AsyncClient(headers={"Authorization": f"token {server.token}"},
                                      timeout=httpx2.Timeout(60, read=600)) as http:
            async with Client(streamable_http_client(server.endpoint, http_client=http),
                              client_info=Implementation(name=f"agent-{client}", version="1")) as mcp:
                for i in range(operations // 2):
                    inserted = await mcp.call_tool("insert_cell", {"path": "busy.ipynb",
                                                                   "source": f"v_{client}_{i} = {client * 100 + i}\nprint(v_{client}_{i})"})
                    cell_id = re.search(r"\(id ([^)]+)\)", inserted.content[0].text)
                    if inserted.is_error or cell_id is None:
                        errors.append(inserted.content[0].text)
                        continue
                    ran = await mcp.call_tool("execute_cell", {"path": "busy.ipynb", "cell_id": cell_id.group(1)})
                    if ran.is_error:
                        errors.append(ran.content[0].text)

    async def everyone() -> None:
        async with anyio.create_task_group() as group:
            for client in range(clients):
                group.start_soon(one, client)

    start = time.perf_counter()
    anyio.run(everyone)
    seconds = time.perf_counter() - start
    nb = saved_notebook(server.root / "busy.ipynb", lambda nb: len(nb.cells) == 1 + clients * (operations // 2)
                        and all(c.outputs for c in nb.cells[1:]))
    nbformat.validate(nb)
    want = {f"v_{c}_{i} = {c * 100 + i}\nprint(v_{c}_{i})": f"{c * 100 + i}\n"
            for c in range(clients) for i in range(operations // 2)}
    found = {c.source: "".join(o.get("text", "") for o in c.outputs) for c in nb.cells if c.source in want}
    return {"seconds": seconds, "inserted": len(found), "expected": len(want), "errors": errors,
            "outputs_right": sum(found.get(k) == v for k, v in want.items()), "valid": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--peer-python", default="/tmp/jms-venv/bin/python")
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--operations", type=int, default=20)
    args = parser.parse_args()
    encoding = o200k()
    work = Path(tempfile.mkdtemp(prefix="jb-mcp-bench-"))
    root = work / "root"
    root.mkdir()
    build_notebook(root / "bench.ipynb")
    print(f"notebook: 100 cells, 5 figures, 3 wide DataFrames, {(root / 'bench.ipynb').stat().st_size:,} bytes on disk")

    if Path(args.peer_python).exists():
        peer_root = work / "peer" / "root"
        peer_root.mkdir(parents=True)
        (peer_root / "bench.ipynb").write_bytes((root / "bench.ipynb").read_bytes())
        theirs = peer_read(args.peer_python, peer_root)
    else:
        theirs = f"{args.peer_python} not found: make it with `python -m venv /tmp/jms-venv && /tmp/jms-venv/bin/pip install jupyter-mcp-server==2.2.4`"

    server = start_server(root, "--JupyterBrainMCP.permission=auto")
    try:
        text, images = our_read(server)
        ours = count_tokens(text, image_sizes(images), encoding)
        sources_text = anyio.run(_call_tools, server, [("read_notebook", {"path": "bench.ipynb", "outputs": False})],
                                 "bench", None)[0].text
        ours_sources = count_tokens(sources_text, [], encoding)
        print(f"ours, read_notebook (cells and outputs, 1 call): {ours:,} o200k tokens "
              f"({count_tokens(text, [], encoding):,} text + {len(images)} images {image_sizes(images)[:1]}…)")
        print(f"ours, read_notebook outputs=false (sources only): {ours_sources:,} tokens")
        if isinstance(theirs, str):
            print(f"jupyter-mcp-server 2.2.4: not measured ({theirs})")
        else:
            their_sources, _ = blocks_tokens(theirs["sources"], encoding)
            per_cell = [blocks_tokens(blocks, encoding) for blocks in theirs["cells"]]
            their_all = their_sources + sum(t for t, _ in per_cell)
            their_cells = sum(t for t, _ in per_cell)
            print(f"theirs, read_notebook detailed (sources only): {their_sources:,} tokens; ratio ours/theirs "
                  f"{ours_sources / their_sources:.2f}")
            print(f"theirs, read_cell × 100 with outputs (their way to read the outputs): {their_cells:,} tokens "
                  f"({sum(n for _, n in per_cell)} images); ratio ours/theirs {ours / their_cells:.2f}")
            print(f"theirs, both (a whole read): {their_all:,} tokens; ratio ours/theirs {ours / their_all:.2f} (goal ≤ 0.5)")

        ours_t = endpoint_times(server, args.runs)
        direct_t = direct_times(args.runs)
        p50_ours, p50_direct = statistics.median(ours_t) * 1000, statistics.median(direct_t) * 1000
        print(f"execute_cell p50 {p50_ours:.1f} ms through the endpoint vs {p50_direct:.1f} ms through jupyter_client: "
              f"+{p50_ours - p50_direct:.1f} ms (goal ≤ 20 ms; {args.runs} runs each)")

        result = concurrency(server, args.clients, args.operations)
        print(f"{args.clients} clients × {args.operations} operations at once: {result['seconds']:.1f} s; "
              f"{result['inserted']}/{result['expected']} inserted cells present, {result['outputs_right']} with their "
              f"own output, nbformat.validate passed; {len(result['errors'])} errors {result['errors'][:2]}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
