"""Which program a named engine runs, and the one line that says how to install it.

The built-in harness is ``builtin``; the others are ACP agents started as subprocesses.
``AgentMagics.engines`` adds names (a command line each) or replaces these.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass

BUILTIN = "builtin"


@dataclass(frozen=True)
class EngineSpec:
    """An ACP agent: its name, the command that starts it, and how to get it."""

    name: str
    command: tuple[str, ...]
    install: str = ""  # the line shown when the program is not found

    def executable(self) -> str | None:
        """The program's full path, or None when it is not installed (not on PATH)."""
        return shutil.which(self.command[0])


NAMED_ENGINES: dict[str, EngineSpec] = {
    "claude-code": EngineSpec("claude-code", ("claude-code-acp",),
                              "npm install -g @zed-industries/claude-code-acp"),
    "codex": EngineSpec("codex", ("codex-acp",), "npm install -g @zed-industries/codex-acp"),
    "gemini": EngineSpec("gemini", ("gemini", "--experimental-acp"), "npm install -g @google/gemini-cli"),
}


class EngineNotFound(Exception):
    """An unknown engine name, or an engine whose program is not installed (one line)."""


def engine_spec(name: str, extra: dict[str, str] | None = None) -> EngineSpec:
    """The engine called ``name``: ``extra`` (``AgentMagics.engines``) first, then the named ones."""
    key = name.strip().lower()
    extra = {k.strip().lower(): v for k, v in (extra or {}).items()}
    if key in extra:
        command = tuple(shlex.split(extra[key])) if isinstance(extra[key], str) else tuple(extra[key])
        if not command:
            raise EngineNotFound(f"engine {name!r}: AgentMagics.engines gives it an empty command")
        return EngineSpec(key, command, f"install {command[0]!r} or fix AgentMagics.engines[{key!r}]")
    if key in NAMED_ENGINES:
        return NAMED_ENGINES[key]
    known = ", ".join(sorted({BUILTIN, *NAMED_ENGINES, *extra}))
    raise EngineNotFound(f"unknown engine {name!r}; choose from {known} (AgentMagics.engines adds others)")


def require_installed(spec: EngineSpec) -> str:
    """The engine's program path, or ``EngineNotFound`` naming what to install."""
    found = spec.executable()
    if found is None:
        raise EngineNotFound(f"engine {spec.name!r} needs {spec.command[0]!r}, which is not on PATH: {spec.install}")
    return found
