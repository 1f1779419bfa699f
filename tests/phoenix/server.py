"""A real Arize Phoenix for the trace tests: started from its own virtualenv
(``scripts/phoenix_env.py``) as a subprocess on free ports of 127.0.0.1, with a throwaway
working directory (its SQLite database), waited for with a bounded poll, stopped after."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

# A bound against hanging, not a schedule: the poll returns as soon as Phoenix answers,
# and its first start (database migrations) on a busy 2-core machine can take long.
START_TIMEOUT_S = 300.0


class PhoenixUnavailable(RuntimeError):
    """Phoenix's venv is missing or the server did not come up."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PhoenixServer:
    base: str  # http://127.0.0.1:PORT
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def traces_endpoint(self) -> str:
        """Where OTLP/HTTP spans go."""
        return f"{self.base}/v1/traces"

    def get(self, path: str, **params: Any) -> httpx.Response:
        """A GET of Phoenix's API (the caller checks the status)."""
        return httpx.get(f"{self.base}{path}", params=params, timeout=30)

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)


def start_phoenix(python: Path, workdir: Path) -> PhoenixServer:
    """Phoenix serving on a free port, its data in ``workdir``; raises PhoenixUnavailable
    (with the server's log) if it exits or does not answer within START_TIMEOUT_S."""
    port, grpc_port = free_port(), free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_WORKING_DIR": str(workdir), "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    for name in ("PHOENIX_SQL_DATABASE_URL", "PHOENIX_COLLECTOR_ENDPOINT", "PYTHONPATH"):
        env.pop(name, None)  # its own SQLite in workdir; none of our code on its path
    log = workdir / "phoenix.log"
    with log.open("wb") as out:
        process = subprocess.Popen([str(python), "-m", "phoenix.server.main", "serve"], env=env, cwd=workdir,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    server = PhoenixServer(f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise PhoenixUnavailable(f"Phoenix exited ({process.returncode}):\n{server.log_tail()}")
        try:
            if httpx.get(f"{server.base}/healthz", timeout=5).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.5)  # the poll's interval; the bound is the deadline
    server.stop()
    raise PhoenixUnavailable(f"Phoenix did not answer within {START_TIMEOUT_S:.0f} s:\n{server.log_tail()}")
