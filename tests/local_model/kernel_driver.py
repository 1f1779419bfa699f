"""Drive a real Jupyter kernel from a test: run cells, read values, interrupt mid-stream.

Every iopub message of a cell is kept, so a test can look at what a front-end would get:
the agent view's events (``comm_msg`` batches), its display data and the printed text.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import KernelManager, start_new_kernel


@dataclass
class CellRun:
    """What one executed cell produced."""

    code: str
    reply: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def status(self) -> str:
        return str(self.reply.get("status", ""))

    def check(self) -> CellRun:
        assert self.status == "ok", f"cell failed: {self.reply}\n{self.stdout}{self.stderr}"
        return self

    def _stream(self, name: str) -> str:
        return "".join(
            m["content"]["text"] for m in self.messages
            if m["msg_type"] == "stream" and m["content"]["name"] == name
        )

    @property
    def stdout(self) -> str:
        return self._stream("stdout")

    @property
    def stderr(self) -> str:
        return self._stream("stderr")

    @property
    def events(self) -> list[dict[str, Any]]:
        """The agent events the view received, in order."""
        return [event for m in self.messages for event in _events_of(m)]

    def displays(self) -> list[dict[str, Any]]:
        """``data`` of every display_data / update_display_data, in order."""
        return [
            m["content"]["data"] for m in self.messages
            if m["msg_type"] in ("display_data", "update_display_data")
        ]


def _events_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    if message["msg_type"] != "comm_msg":
        return []
    content = message["content"].get("data", {}).get("content") or {}
    return list(content.get("events") or []) if content.get("kind") == "events" else []


class AgentKernel:
    """A started kernel and its blocking client."""

    def __init__(self, manager: KernelManager, client: BlockingKernelClient) -> None:
        self.manager = manager
        self.client = client

    @classmethod
    def start(cls, *, cwd: Path, env: dict[str, str]) -> AgentKernel:
        manager, client = start_new_kernel(kernel_name="python3", cwd=str(cwd), env=env)
        return cls(manager, client)

    def run(self, code: str, *, timeout: float = 600) -> CellRun:
        """Run ``code`` to its reply; ``timeout`` only stops a hang (a loaded machine is slow)."""
        run = CellRun(code)
        started = time.monotonic()
        reply = self.client.execute_interactive(
            code, timeout=timeout, output_hook=run.messages.append, allow_stdin=False
        )
        run.seconds = time.monotonic() - started
        run.reply = reply["content"]
        return run

    def value(self, expression: str) -> Any:
        """The value of ``expression`` in the kernel, through JSON (``default=str``)."""
        run = self.run(f"import json as _j; print(_j.dumps({expression}, default=str))", timeout=30).check()
        return json.loads(run.stdout.strip().splitlines()[-1])

    def run_and_interrupt(self, code: str, *, when: str = "text_delta", count: int = 1, timeout: float = 600) -> CellRun:
        """Run ``code`` and interrupt the kernel (the stop button) once the view has got
        ``count`` events of type ``when`` (an event, never a delay); the run ends with the
        cell's reply. ``timeout`` only stops a hang."""
        run = CellRun(code)
        started = time.monotonic()
        msg_id = self.client.execute(code, allow_stdin=False)
        deadline = started + timeout
        interrupted = False
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {when!r} event within {timeout}s: {[e.get('type') for e in run.events]}"
            message = self.client.get_iopub_msg(timeout=remaining)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            run.messages.append(message)
            if not interrupted and sum(e.get("type") == when for e in run.events) >= count:
                self.manager.interrupt_kernel()
                interrupted = True
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
        reply = self.client.get_shell_msg(timeout=30)
        assert reply["parent_header"]["msg_id"] == msg_id
        run.reply = reply["content"]
        run.seconds = time.monotonic() - started
        return run

    def shutdown(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)
