"""A kernel's providers, kept across cells: one HTTP client, one SSL context, one connection.

Building a provider by name (``--provider auto``, ``openai``, ``anthropic,ollama``) builds
its SDK client, and with it an ``httpx`` client and an SSL context; a new one per cell also
meant a new TCP (and TLS) connection per cell, and a keyless local server asked for its
models again. So a cell reuses the provider an earlier cell built with the same resolved
configuration: the name (``auto`` resolved to what it picks), the model, and a fingerprint
of the environment the providers read (``ANTHROPIC_*``, ``OPENAI_*``, ``JUPYTER_BRAIN_*``:
keys, base URLs). The fingerprint is a SHA-256 digest: no key is kept here, in any form a
view, a log or a repr could show. A changed setting builds a new provider; the ones built
for an older environment are closed then, and every kept one when the kernel exits.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

ENV_PREFIXES = ("ANTHROPIC_", "OPENAI_", "JUPYTER_BRAIN_")


def environment_fingerprint(environ: Any = None) -> str:
    """A digest of the provider settings in the environment (never the values themselves)."""
    env = os.environ if environ is None else environ
    digest = hashlib.sha256()
    for name in sorted(k for k in env if k.startswith(ENV_PREFIXES)):
        digest.update(f"{name}\0{env[name]}\0".encode())
    return digest.hexdigest()


def close_provider(provider: Any) -> None:
    """Release a provider's HTTP client (a chain's members' too); a failure changes nothing."""
    for member in getattr(provider, "members", ()) or ():
        close_provider(member)
    close = getattr(provider, "close", None)
    if close is None:
        close = getattr(getattr(provider, "_client", None), "close", None)
    if close is None:
        return
    try:
        close()
    except Exception:  # noqa: BLE001 - a client that cannot close is dropped all the same
        pass


class ProviderCache:
    """Providers by resolved configuration; ``get`` builds one only for a new configuration."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[tuple[str, str, str], Any] = {}
        self.built = 0  # providers built (tests, benchmarks)
        atexit.register(_close_at_exit, weakref.ref(self))

    def get(self, name: str, model: str | None, build: Callable[[], Any]) -> Any:
        """The provider for ``name``/``model`` under the current environment, built at most once."""
        fingerprint = environment_fingerprint()
        key = (_resolved_name(name), model or "", fingerprint)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                return kept
            stale = [k for k in self._kept if k[2] != fingerprint]
            old = [self._kept.pop(k) for k in stale]
        for provider in old:  # built for a setting that changed since
            close_provider(provider)
        provider = build()  # outside the lock: an SDK import must not block other cells' lookups
        with self._lock:
            kept = self._kept.setdefault(key, provider)
            if kept is provider:
                self.built += 1
        if kept is not provider:  # another thread (the warm-up) built the same one first
            close_provider(provider)
        return kept

    def close(self) -> None:
        """Close every kept provider (the kernel shuts down, the extension unloads)."""
        with self._lock:
            kept = list(self._kept.values())
            self._kept.clear()
        for provider in kept:
            close_provider(provider)

    def __len__(self) -> int:
        return len(self._kept)


def _resolved_name(name: str) -> str:
    """``auto`` as the provider it picks now (so ``auto`` and ``openai`` share one), else the name."""
    key = name.strip().lower()
    if key != "auto":
        return key
    from ..providers.registry import configured_provider

    return configured_provider() or key


def _close_at_exit(ref: weakref.ReferenceType[ProviderCache]) -> None:
    cache = ref()
    if cache is not None:
        cache.close()
