"""Split streamed model text into answer text and ``<think>…</think>`` reasoning.

Open-weight reasoning models served over OpenAI-compatible APIs (Qwen, DeepSeek-R1,
…) put their reasoning inline in ``content``. Tags can be split anywhere across stream
chunks ("<th" + "ink>"), so the splitter holds back only the few characters that could
still turn out to be a tag and releases everything else at once, keeping the stream live.
"""

from __future__ import annotations

from typing import Literal

SegmentKind = Literal["text", "thinking", "thinking_end"]
Segment = tuple[SegmentKind, str]


class ThinkTagSplitter:
    """Incremental splitter; feed chunks in order, then call ``finish()`` once.

    Emits ``("text", s)`` and ``("thinking", s)`` segments plus ``("thinking_end", "")``
    when a think block closes (or the stream ends inside one). Whitespace right after
    an opening or closing tag is dropped, since models put a newline there by habit.
    A closing tag outside a think block is kept as literal text.
    """

    def __init__(self, open_tag: str = "<think>", close_tag: str = "</think>") -> None:
        self.open_tag = open_tag
        self.close_tag = close_tag
        self._buf = ""
        self._inside = False
        self._strip_ws = False

    @property
    def inside(self) -> bool:
        """True while the stream is inside a think block."""
        return self._inside

    def feed(self, chunk: str) -> list[Segment]:
        out: list[Segment] = []
        self._buf += chunk
        while self._buf:
            tag = self.close_tag if self._inside else self.open_tag
            pos = self._buf.find(tag)
            if pos >= 0:
                self._emit(out, self._buf[:pos])
                self._buf = self._buf[pos + len(tag) :]
                if self._inside:
                    out.append(("thinking_end", ""))
                self._inside = not self._inside
                self._strip_ws = True
                continue
            keep = _partial_tag_suffix(self._buf, tag)
            self._emit(out, self._buf[: len(self._buf) - keep])
            self._buf = self._buf[len(self._buf) - keep :]
            break
        return out

    def finish(self) -> list[Segment]:
        """Flush held-back characters; close a think block the stream left open."""
        out: list[Segment] = []
        self._emit(out, self._buf)
        self._buf = ""
        if self._inside:
            out.append(("thinking_end", ""))
            self._inside = False
        return out

    def _emit(self, out: list[Segment], s: str) -> None:
        if self._strip_ws:
            s = s.lstrip()
            if not s:
                return
            self._strip_ws = False
        if not s:
            return
        kind: SegmentKind = "thinking" if self._inside else "text"
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + s)
        else:
            out.append((kind, s))


def _partial_tag_suffix(buf: str, tag: str) -> int:
    """Length of the longest suffix of ``buf`` that is a proper prefix of ``tag``."""
    for n in range(min(len(buf), len(tag) - 1), 0, -1):
        if tag.startswith(buf[-n:]):
            return n
    return 0
