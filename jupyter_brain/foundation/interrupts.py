"""Ctrl-C that arrives while pydantic builds a validator is still Ctrl-C.

Our models build their validators on first use, often in a kernel's first turn (#40).
pydantic-core builds them in Rust; a ``KeyboardInterrupt`` raised while it calls back into
Python comes out as a ``SchemaError`` (``Error building "literal" validator:
KeyboardInterrupt: ``) with no cause attached. The class is left as it was (the next use
builds again), so a turn that sees one was interrupted by the user, and must say so rather
than report an internal error.
"""

from __future__ import annotations

from pydantic_core import SchemaError

# What a turn's ``except`` catches where it catches Ctrl-C; ``is_interrupt`` tells them apart.
INTERRUPTS: tuple[type[BaseException], ...] = (KeyboardInterrupt, SchemaError)


def is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is the user's Ctrl-C: a ``KeyboardInterrupt``, or a validator build
    it interrupted."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    return isinstance(exc, SchemaError) and "KeyboardInterrupt:" in str(exc)
