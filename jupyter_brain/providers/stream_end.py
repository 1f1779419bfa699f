"""How a Chat Completions stream ended, for servers that send no ``finish_reason``.

OpenAI and llama.cpp end every answer with a chunk carrying a ``finish_reason``. tinyq4
(a small GGUF runtime with an OpenAI-compatible server) sends none: its last content
chunk is followed by ``data: [DONE]`` alone. The ``openai`` SDK swallows ``[DONE]``, so a
stream that ended that way looks exactly like one whose connection closed cleanly between
two events. ``DoneWatchingDecoder`` tells the two apart: it wraps the SDK's own SSE
decoder and notes whether ``[DONE]`` came. A stream with ``[DONE]`` but no finish_reason
ended on purpose; ``inferred_finish`` then guesses why (``length`` when it produced as
many tokens as ``max_tokens`` allowed, else ``stop``), and the result says the stop reason
was inferred. A stream with neither is still a dropped connection.

At ``[DONE]`` the decoder also reads the rest of the body (``_drain``), so the HTTP
connection is kept for the next call (issue #26).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any


class DoneWatchingDecoder:
    """An SSE decoder (the SDK's ``SSEBytesDecoder`` protocol) that notes a ``[DONE]`` event."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.saw_done = False

    def iter_bytes(self, iterator: Iterator[bytes]) -> Iterator[Any]:
        for sse in self._inner.iter_bytes(iterator):
            if str(getattr(sse, "data", "")).startswith("[DONE]"):
                self.saw_done = True  # before yielding: the SDK stops reading at [DONE]
                _drain(iterator)
            yield sse

    def aiter_bytes(self, iterator: Any) -> Any:  # the async client is never used here
        return self._inner.aiter_bytes(iterator)


MAX_DRAIN_CHUNKS = 8


def _drain(iterator: Iterator[bytes]) -> None:
    """Read the body's end (after ``[DONE]``, only the closing chunk of a chunked body), so
    the connection goes back to the pool: the sync SDK closes a stream at ``[DONE]`` unread,
    which made every call open a new connection (and, to a remote server, a new TLS
    handshake). A failure here changes nothing: the answer is complete."""
    try:
        for n, _ in enumerate(iterator):
            if n >= MAX_DRAIN_CHUNKS:  # more than a closing chunk: not worth reading on
                break
    except Exception:  # noqa: BLE001 - the connection is then simply not reused
        pass


@cache
def watching_client_class(openai_module: Any) -> type:
    """``openai.OpenAI`` whose streams decode through a ``DoneWatchingDecoder``.

    ``_make_sse_decoder`` is the SDK's own hook for a client's SSE decoder (its
    ``SSEBytesDecoder`` protocol is public); the SDK calls it once per stream.
    """

    class DoneWatchingOpenAI(openai_module.OpenAI):  # type: ignore[name-defined,misc,unused-ignore]
        def _make_sse_decoder(self) -> Any:
            return DoneWatchingDecoder(super()._make_sse_decoder())

    return DoneWatchingOpenAI


def saw_done(stream: Any) -> bool | None:
    """Whether the SDK stream's body ended with ``[DONE]`` (None: it cannot be known)."""
    decoder = getattr(stream, "_decoder", None)
    return decoder.saw_done if isinstance(decoder, DoneWatchingDecoder) else None


def inferred_finish(tokens: int, max_tokens: int | None) -> str:
    """The ``finish_reason`` a stream that ended with ``[DONE]`` alone most likely had."""
    return "length" if max_tokens and tokens >= max_tokens else "stop"
