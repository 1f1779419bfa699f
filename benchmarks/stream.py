"""Streaming benchmark: a scripted 2,000 tokens/s stream into an AgentView in a real
kernel, measured from the client side (what a Jupyter server would forward to the
browser): comm messages per second and bytes, against DESIGN.md's limits (the server
drops iopub above 1,000 msgs/s; the goal here is ≤ 30 msgs/s, bytes linear in the text).

    python benchmarks/stream.py [--seconds 10] [--rate 2000]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from typing import Any

KERNEL_CODE = """
import json, time
from jupyter_brain.widgets import AgentView
from jupyter_brain.agent.events import TurnStart, StepStart, TextDelta, StepEnd, TurnEnd
view = AgentView()
view.handle(TurnStart(session_id="bench", user_message="stream"))
view.handle(StepStart(step=1))
rate, seconds = {rate}, {seconds}
n = int(rate * seconds)
parts = []
t0 = time.monotonic()
for i in range(n):
    tok = f"tok{{i}} "
    parts.append(tok)
    view.handle(TextDelta(step=1, text=tok))
    lag = t0 + (i + 1) / rate - time.monotonic()
    if lag > 0:
        time.sleep(lag)
produced = time.monotonic() - t0
view.handle(StepEnd(step=1))
view.handle(TurnEnd(status="completed", text="".join(parts), steps=1))
print(json.dumps({{"tokens": n, "chars": sum(map(len, parts)), "seconds": produced}}))
"""


def run(seconds: float, rate: int) -> dict[str, Any]:
    from jupyter_client import KernelManager

    km = KernelManager(kernel_name="python3")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        kc.execute_interactive("import jupyter_brain.widgets.agent_view", timeout=60)  # warm imports
        msg_id = kc.execute(KERNEL_CODE.format(rate=rate, seconds=seconds))
        custom: list[tuple[float, int, dict[str, Any]]] = []  # (arrival, bytes, content)
        updates: list[tuple[float, int]] = []
        other_comm = 0
        produced: dict[str, Any] = {}
        start = None
        while True:
            msg = kc.get_iopub_msg(timeout=seconds + 60)
            now = time.monotonic()
            kind, content = msg["msg_type"], msg["content"]
            if kind == "comm_msg":
                data = content["data"]
                size = len(json.dumps(content))
                if data.get("method") == "custom":
                    start = start if start is not None else now
                    custom.append((now, size, data["content"]))
                elif data.get("method") == "update":
                    updates.append((now, size))
                else:
                    other_comm += 1
            elif kind == "stream" and msg["parent_header"].get("msg_id") == msg_id:
                produced = json.loads(content["text"].strip().splitlines()[-1])
            elif kind == "error":
                sys.exit("\n".join(content["traceback"]))
            elif (
                kind == "status"
                and content["execution_state"] == "idle"
                and msg["parent_header"].get("msg_id") == msg_id
            ):
                break
        text = "".join(
            e["text"] for _, _, c in custom for e in c["events"] if e["type"] == "text_delta"
        )
        return {"custom": custom, "updates": updates, "other": other_comm, "produced": produced, "text": text}
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def report(seconds: float, rate: int, r: dict[str, Any]) -> None:
    custom, updates, produced = r["custom"], r["updates"], r["produced"]
    chars = produced.get("chars", 0)
    expected = "".join(f"tok{i} " for i in range(produced.get("tokens", 0)))
    t0 = custom[0][0] if custom else 0.0
    span = (custom[-1][0] - t0) if len(custom) > 1 else 0.0
    per_second: Counter[int] = Counter()
    bytes_per_second: Counter[int] = Counter()
    for t, size, _ in custom:
        per_second[int(t - t0)] += 1
        bytes_per_second[int(t - t0)] += size
    for t, size in updates:
        per_second[int(t - t0)] += 1
        bytes_per_second[int(t - t0)] += size
    custom_bytes = sum(s for _, s, _ in custom)
    update_bytes = sum(s for _, s in updates)
    total_msgs = len(custom) + len(updates)

    print(f"stream: {produced.get('tokens', 0):,} tokens ({chars:,} chars) at {rate:,}/s for {seconds:g} s"
          f" (kernel loop took {produced.get('seconds', 0):.2f} s)")
    print(f"comm messages seen by the client: {total_msgs} "
          f"({len(custom)} live batches + {len(updates)} state updates; {r['other']} other)")
    if span > 0:
        print(f"  average rate       : {len(custom) / span:.1f} batches/s over {span:.2f} s "
              f"(goal ≤ 30/s; one message per token would be {rate:,}/s)")
    print(f"  busiest second     : {max(per_second.values(), default=0)} messages")
    print(f"  live batch bytes   : {custom_bytes:,} ({custom_bytes / max(chars, 1):.2f} bytes per text char)")
    print(f"  state update bytes : {update_bytes:,} (transcript commits at step/turn end)")
    print(f"  text received exact: {r['text'] == expected}")
    print("  per second (messages, bytes):")
    for sec in sorted(per_second):
        print(f"    {sec:3d}s  {per_second[sec]:4d}  {bytes_per_second[sec]:9,}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0, help="stream duration (default 10)")
    parser.add_argument("--rate", type=int, default=2000, help="tokens per second (default 2000)")
    args = parser.parse_args(argv)
    report(args.seconds, args.rate, run(args.seconds, args.rate))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
