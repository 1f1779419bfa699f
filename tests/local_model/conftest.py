"""Fixtures for the real-model tests: one llama.cpp server per session, a kernel per test.

Every kernel reaches the server through a ``RecordingProxy``, which refuses a chat
request without a ``max_tokens`` bound; a kernel starts with the bounded providers its
cells name (``KERNEL_PROVIDERS``). A missing package fails these tests with the install
command; it never skips them (the suite's promise is that a real model ran).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .kernel_driver import AgentKernel
from .server import (
    ANSWER_TOKENS,
    LONG_ANSWER_TOKENS,
    LocalModelServer,
    LocalModelUnavailable,
    RecordingProxy,
    chat_completion,
    end_of_generation_tokens,
    gguf_path,
    start_server,
)
from .tinyq4_server import start_tinyq4

# What must never leak into the kernel: a real key would send the prompts elsewhere.
_SCRUBBED = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL")

# The providers a cell names with --provider, made in the kernel before any cell runs;
# each bounds its answers with max_tokens (private names: the variable tools skip them).
#   _local  the openai provider, as `--provider openai --model M` builds it, bounded
#   _auto   what `auto` builds from OPENAI_BASE_URL alone (the model from /v1/models), bounded
#   _steady cannot stop before max_tokens (every end-of-generation token has logit_bias
#           -100): an answer of exactly ANSWER_TOKENS tokens, whatever the model makes of
#           the prompt, for checks that need an answer of some length
#   _long   the same with LONG_ANSWER_TOKENS: still generating when a test interrupts it
KERNEL_PROVIDERS = """
from jupyter_brain.providers.openai_compat import OpenAICompatProvider as _OpenAICompat
from jupyter_brain.providers.registry import get_provider as _get_provider

class _CannotStopEarly(_OpenAICompat):
    def request_params(self, messages, tools):
        params = super().request_params(messages, tools)
        params["logit_bias"] = {str(token): -100 for token in %(eog)r}
        return params

_local = _get_provider("openai", %(model)r, max_tokens=%(answer)d)
_auto = _get_provider("auto", max_tokens=%(answer)d)
_steady = _CannotStopEarly(%(model)r, max_tokens=%(answer)d)
_long = _CannotStopEarly(%(model)r, max_tokens=%(long)d)
"""


@pytest.fixture(scope="session")
def local_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModelServer]:
    """A running llama-cpp-python server with SmolLM2-135M-Instruct on 127.0.0.1."""
    try:
        server = start_server(tmp_path_factory.mktemp("llama_cpp"))
    except LocalModelUnavailable as exc:
        pytest.fail(f"the local model server is unavailable: {exc}", pytrace=False)
    try:
        started = time.monotonic()
        # the first evaluation pages the weights in; keep that out of the tests
        chat_completion(server.base_url, {"model": server.model, "max_tokens": 1,
                                          "messages": [{"role": "user", "content": "hi"}]})
        print(f"\n[local model] {server.model} on {server.base_url}: up in {server.startup_s:.1f}s, "
              f"warm-up {time.monotonic() - started:.1f}s")
        yield server
    finally:
        server.stop()
        assert server.process.poll() is not None, "the llama.cpp server outlived the session"


@pytest.fixture(scope="session")
def eog_tokens(local_model: LocalModelServer) -> list[int]:
    """The ids of the tokens that end the model's generation (see ``end_of_generation_tokens``)."""
    tokens = end_of_generation_tokens(gguf_path())
    assert tokens, "the GGUF names no end-of-generation token"
    return tokens


@pytest.fixture()
def recording_proxy(local_model: LocalModelServer) -> Iterator[RecordingProxy]:
    """A pass-through proxy in front of the server that keeps every request and answer."""
    with RecordingProxy(local_model.port) as proxy:
        yield proxy
    refused = [f"{e.path}: {e.refused}" for e in proxy.refused()]
    assert not refused, f"requests went to the model without a max_tokens bound: {refused}"


@pytest.fixture()
def agent_kernel(
    tmp_path: Path, local_model: LocalModelServer, recording_proxy: RecordingProxy, eog_tokens: list[int]
) -> Iterator[Callable[[], AgentKernel]]:
    """``agent_kernel()``: a real kernel with jupyter_brain loaded and the bounded providers
    (``KERNEL_PROVIDERS``), talking to the model through ``recording_proxy``.

    OPENAI_BASE_URL is the only model setting in its environment (no key at all).
    """
    kernels: list[AgentKernel] = []

    def start() -> AgentKernel:
        env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
        env["OPENAI_BASE_URL"] = recording_proxy.base_url
        kernel = AgentKernel.start(cwd=tmp_path, env=env)
        kernels.append(kernel)
        kernel.run("%load_ext jupyter_brain", timeout=60).check()
        kernel.run(KERNEL_PROVIDERS % {"model": local_model.model, "eog": eog_tokens,
                                       "answer": ANSWER_TOKENS, "long": LONG_ANSWER_TOKENS}, timeout=60).check()
        return kernel

    yield start
    for kernel in kernels:
        kernel.shutdown()


@pytest.fixture(scope="session")
def tinyq4(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModelServer]:
    """A running tinyq4 server with SmolLM2-135M (Q8_0, converted once into build/tinyq4-model)."""
    cache_dir = Path(request.config.rootpath) / "build" / "tinyq4-model"
    try:
        server = start_tinyq4(cache_dir, tmp_path_factory.mktemp("tinyq4"))
    except LocalModelUnavailable as exc:
        pytest.fail(f"the tinyq4 server is unavailable: {exc}", pytrace=False)
    try:
        print(f"\n[tinyq4] {server.model} on {server.base_url}: up in {server.startup_s:.1f}s")
        yield server
    finally:
        server.stop()
        assert server.process.poll() is not None, "the tinyq4 server outlived the session"
