"""One asyncio loop on a daemon thread, where every MCP connection of the kernel lives.

The SDK is async and its connections must be opened and closed by the same task, but
the kernel (and the tool worker threads) are synchronous: they hand coroutines to this
loop and wait for them with a bound, so a stuck server can never hold the caller.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopTimeout(TimeoutError):
    """The loop did not finish a coroutine in time (the coroutine was cancelled)."""


class BackgroundLoop:
    def __init__(self, name: str = "jupyter-brain-mcp") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or not self.running:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=run, name=self._name, daemon=True)
                self._thread.start()
                ready.wait(5)
                self._loop = loop
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._ensure())

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coro`` on the loop and wait at most ``timeout`` seconds for it."""
        if self._thread is not None and threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("BackgroundLoop.run called from the loop's own thread")
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise LoopTimeout(f"no answer within {timeout:g}s") from None

    def stop(self, timeout: float = 2.0) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()
