"""Fixtures for the real-model tests: one llama.cpp server per session, a kernel per test.

A missing package fails these tests with the install command; it never skips them (the
suite's promise is that a real model ran).
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from .kernel_driver import AgentKernel
from .server import LocalModelServer, LocalModelUnavailable, RecordingProxy, start_server

# What must never leak into the kernel: a real key would send the prompts elsewhere.
_SCRUBBED = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL")


@pytest.fixture(scope="session")
def local_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModelServer]:
    """A running llama-cpp-python server with SmolLM2-135M-Instruct on 127.0.0.1."""
    try:
        server = start_server(tmp_path_factory.mktemp("llama_cpp"))
    except LocalModelUnavailable as exc:
        pytest.fail(f"the local model server is unavailable: {exc}", pytrace=False)
    try:
        started = time.monotonic()
        _warm_up(server)  # the first evaluation pages the weights in; keep that out of the tests
        print(f"\n[local model] {server.model} on {server.base_url}: up in {server.startup_s:.1f}s, "
              f"warm-up {time.monotonic() - started:.1f}s")
        yield server
    finally:
        server.stop()
        assert server.process.poll() is not None, "the llama.cpp server outlived the session"


def _warm_up(server: LocalModelServer) -> None:
    body = {"model": server.model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions", data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()


@pytest.fixture()
def recording_proxy(local_model: LocalModelServer) -> Iterator[RecordingProxy]:
    """A pass-through proxy in front of the server that keeps every request and answer."""
    with RecordingProxy(local_model.port) as proxy:
        yield proxy


@pytest.fixture()
def agent_kernel(tmp_path: Path):
    """``agent_kernel(base_url)``: a real kernel with jupyter_brain loaded, talking to base_url.

    OPENAI_BASE_URL is the only model setting in its environment (no key at all).
    """
    kernels: list[AgentKernel] = []

    def start(base_url: str) -> AgentKernel:
        env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
        env["OPENAI_BASE_URL"] = base_url
        kernel = AgentKernel.start(cwd=tmp_path, env=env)
        kernels.append(kernel)
        kernel.run("%load_ext jupyter_brain", timeout=60).check()
        return kernel

    yield start
    for kernel in kernels:
        kernel.shutdown()
