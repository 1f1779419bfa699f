"""Bytes on a kernel's iopub per ``%%agent`` cell, beside a cell that prints the same text.

A real kernel (jupyter_client + ipykernel) gets each cell as JupyterLab sends it (a ``cellId``,
stdin allowed, so the agent view is drawn). ``N`` ``%%agent --provider bot`` cells run with a
scripted provider answering the same ~200 words, interleaved with ``N`` raw cells that print
that text (the baseline, same run). Every iopub message a cell caused is counted as its
serialized size (header, parent header, metadata, content, buffers: what the kernel puts
on the wire and jupyter-server forwards to the browser).

Printed: each cell's bytes; the kernel's first ``%%agent`` cell (it carries the view's
front-end code, once per kernel, issue #40) and the median of the later ones; what an agent
cell adds over the raw cell; the bytes by message type of one later agent cell; the total for
``N`` cells of each kind.

    python benchmarks/iopub_weight.py [--cells 10]

Goal (issue #40): at most 20 KB of iopub per agent cell beyond its own text and figures.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import uuid
from collections import Counter
from typing import Any

WORDS = 200
TEXT = " ".join(f"word{i % 37}{'.' if i % 12 == 11 else ''}" for i in range(WORDS))
GOAL = 20_000


def size(msg: dict[str, Any]) -> int:
    """A message's bytes as serialized for the wire (JSON parts and binary buffers)."""
    parts = (msg["header"], msg["parent_header"], msg["metadata"], msg["content"])
    return sum(len(json.dumps(p, default=str, ensure_ascii=False).encode()) for p in parts) + sum(
        len(memoryview(b).cast("B")) for b in msg.get("buffers") or ())


class Kernel:
    def __init__(self) -> None:
        from jupyter_client import KernelManager

        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "JUPYTER_BRAIN_"))}
        env["JUPYTER_BRAIN_WARM_UP"] = "0"  # the warm-up sends nothing; off, for a quieter kernel
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def cell(self, code: str) -> Counter[str]:
        """Run one cell as JupyterLab sends it; its iopub bytes by message type."""
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": True, "stop_on_error": True}
        msg = self.kc.session.msg("execute_request", content)
        msg["metadata"]["cellId"] = str(uuid.uuid4())
        self.kc.shell_channel.send(msg)
        by_type: Counter[str] = Counter()
        while True:
            reply = self.kc.get_iopub_msg(timeout=120)
            if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
                continue
            kind = reply["msg_type"]
            if kind == "error":
                raise RuntimeError(f"cell failed: {reply['content'].get('evalue')}\n{code}")
            by_type[kind] += size(reply)
            if kind == "status" and reply["content"]["execution_state"] == "idle":
                break
        self.kc.get_shell_msg(timeout=60)
        return by_type

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=10, help="agent cells (and as many raw cells)")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="jb-iopub-weight-")
    kernel = Kernel()
    try:
        kernel.cell(
            "%load_ext jupyter_brain\n"
            f"%config AgentMagics.data_dir = {data_dir!r}\n"
            "from jupyter_brain.providers.scripted import ScriptedProvider\n"
            f"bot = ScriptedProvider([{TEXT!r}], repeat=True)\n"
            f"_text = {TEXT!r}\n"
        )
        agent, raw = [], []
        for i in range(args.cells):  # each its own prompt, as a notebook's cells are
            agent.append(kernel.cell(f"%%agent --provider bot\nWrite the words ({i})."))
            raw.append(kernel.cell("print(_text)"))
    finally:
        kernel.close()
    totals = [sum(c.values()) for c in agent]
    raws = [sum(c.values()) for c in raw]
    later = statistics.median(totals[1:]) if len(totals) > 1 else totals[0]
    raw_median = statistics.median(raws)
    print(f"iopub bytes per cell, {args.cells} %%agent cells and {args.cells} raw print cells "
          f"(the same {len(TEXT):,} characters, {WORDS} words), one kernel:")
    print("  %%agent cells: " + " ".join(f"{b:,}" for b in totals))
    print("  raw cells:     " + " ".join(f"{b:,}" for b in raws))
    print(f"  first %%agent cell {totals[0]:>10,} B   (+{totals[0] - raw_median:,.0f} over the raw cell)")
    print(f"  later %%agent cell {later:>10,.0f} B   (+{later - raw_median:,.0f} over the raw cell; "
          f"goal <= +{GOAL:,})")
    print(f"  raw print cell     {raw_median:>10,.0f} B")
    print(f"  {args.cells} %%agent cells: {sum(totals):,} B   {args.cells} raw cells: {sum(raws):,} B")
    print("  one later %%agent cell by message type: " + ", ".join(
        f"{kind} {n:,}" for kind, n in agent[-1].most_common()))


if __name__ == "__main__":
    sys.exit(main())
