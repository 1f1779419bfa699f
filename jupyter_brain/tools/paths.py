"""Keep every path the model names inside one workspace folder.

The model writes paths as text, and text can smuggle an escape past a naive
``root / path``: ``..`` segments, absolute paths, symlinks, percent-encoding,
Unicode look-alikes of ``.`` and ``/``, control characters, Windows drive letters and
backslashes, and names too long for the file system. ``WorkspaceRoot.resolve`` refuses
all of these, naming the rule, *before* touching the file system and then checks the
fully resolved (symlink-free) result against the root — so a symlink, or a symlinked
parent folder, pointing out is refused too — and a path it returns is inside the root
at the moment of the call.

Limits: a symlink swapped in between ``resolve`` and ``open`` (a race by a local
process) is not defended against; the model cannot create symlinks through these tools.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from jupyter_brain.agent.tools import ToolError

# Characters that look like a dot or a slash but that NFKC does not fold to one.
_LOOKALIKES = frozenset(
    "\u2215"  # DIVISION SLASH
    "\u2044"  # FRACTION SLASH
    "\u29f8"  # BIG SOLIDUS
    "\u29f9"  # BIG REVERSE SOLIDUS
    "\u2216"  # SET MINUS
    "\u3002"  # IDEOGRAPHIC FULL STOP
    "\u0702"  # SYRIAC SUBLINEAR FULL STOP
    "\u2e31"  # WORD SEPARATOR MIDDLE DOT
    "\u00b7"  # MIDDLE DOT
    "\u2022"  # BULLET
    "\u2219"  # BULLET OPERATOR
)
_PATH_SYNTAX = frozenset("./\\:%~")
_PERCENT_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_DRIVE = re.compile(r"^[A-Za-z]:")
MAX_PATH_CHARS = 1024  # far below PATH_MAX (4096 bytes); no real project path needs more
MAX_NAME_BYTES = 255  # NAME_MAX of common file systems, per path component


class WorkspaceRoot:
    """A folder the file tools may read inside, and nowhere else."""

    def __init__(self, root: str | Path, readable: Sequence[str | Path] = ()) -> None:
        given = Path(root).expanduser()
        if not given.is_dir():
            raise ValueError(f"workspace root {str(given)!r} is not a directory")
        self.root = given.resolve()
        # Absolute paths the model copies from elsewhere may use the unresolved spelling.
        self._aliases = {self.root, Path(os.path.abspath(given))}
        # Folders outside the root the read tools may also read (Agent Skills' folders).
        self.readable = tuple(Path(p).expanduser().resolve() for p in readable)

    def __repr__(self) -> str:
        return f"WorkspaceRoot({str(self.root)!r})"

    # public ------------------------------------------------------------------
    def resolve(self, user_path: str) -> Path:
        """The real path for ``user_path`` (relative to the root, or absolute inside it).

        Raises ``ToolError`` saying why whenever the path could leave the root.
        """
        if not isinstance(user_path, str):
            raise ToolError(f"path must be a string, got {type(user_path).__name__}")
        text = user_path if user_path != "" else "."
        self._check_characters(user_path, text)
        self._check_length(user_path, text)
        self._check_percent_escapes(user_path, text)

        pure = PurePosixPath(text)
        if pure.is_absolute():
            lexical = Path(os.path.normpath(text))
            if not any(_is_within(lexical, alias) for alias in self._aliases):
                raise self._refuse(user_path, "it is an absolute path outside the workspace")
            candidate = lexical
        else:
            self._check_dotdot(user_path, text)
            candidate = self.root / text

        try:
            real = candidate.resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            raise self._refuse(user_path, f"it cannot be resolved ({exc})") from None
        if not _is_within(real, self.root):
            raise self._refuse(user_path, "it follows a symlink that points outside the workspace")
        return real

    def resolve_readable(self, user_path: str) -> Path:
        """Like ``resolve``, for reading: a path into one of the ``readable`` folders is
        accepted too (``../.agents/skills/x/scripts/a.py``, ``~/.claude/skills/x/SKILL.md``
        or absolute), with the same character checks and every symlink followed."""
        try:
            return self.resolve(user_path)
        except ToolError as refused:
            if not self.readable or not isinstance(user_path, str) or not user_path:
                raise
            text = user_path
            self._check_characters(user_path, text[1:] if text.startswith("~/") else text)
            self._check_length(user_path, text)
            self._check_percent_escapes(user_path, text)
            if text.startswith("~/"):
                candidate = Path(text).expanduser()
            elif PurePosixPath(text).is_absolute():
                candidate = Path(text)
            else:
                candidate = self.root / text
            try:
                real = Path(os.path.normpath(candidate)).resolve()
            except (OSError, RuntimeError, ValueError):
                raise refused from None
            if any(_is_within(real, folder) for folder in self.readable):
                return real
            raise

    def contains(self, path: str | Path) -> bool:
        """Whether ``path``, with every symlink followed, lies inside the root."""
        try:
            return _is_within(Path(path).resolve(), self.root)
        except (OSError, RuntimeError, ValueError):
            return False

    def relative(self, path: Path) -> str:
        """``path`` as the model should write it: relative to the root, '/'-separated."""
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return str(path)
        text = rel.as_posix()
        return text if text else "."

    # checks ------------------------------------------------------------------
    def _refuse(self, user_path: str, reason: str) -> ToolError:
        return ToolError(
            f"Refused path {user_path!r}: {reason}. Paths must stay inside the workspace root "
            f"{self.root} — use a path relative to it, such as 'data/file.csv'."
        )

    def _check_characters(self, user_path: str, text: str) -> None:
        if "\x00" in text:
            raise self._refuse(user_path, "it contains a NUL byte")
        for ch in text:
            category = unicodedata.category(ch)
            if category.startswith("C"):
                raise self._refuse(
                    user_path, f"it contains the control or invisible character U+{ord(ch):04X}"
                )
        if "\\" in text:
            raise self._refuse(user_path, "it contains a backslash; use '/' to separate folders")
        if _DRIVE.match(text):
            raise self._refuse(user_path, "it starts with a Windows drive letter")
        if text.startswith("~"):
            raise self._refuse(user_path, "'~' (home folder) is not expanded here")
        for ch in text:
            if ord(ch) < 128:
                continue
            folded = unicodedata.normalize("NFKC", ch)
            if ch in _LOOKALIKES or _PATH_SYNTAX & set(folded):
                raise self._refuse(
                    user_path,
                    f"it contains {ch!r} (U+{ord(ch):04X}), a look-alike of path syntax "
                    f"{folded!r}; write plain ASCII '.' and '/'",
                )

    def _check_length(self, user_path: str, text: str) -> None:
        shown = user_path[:60] + "…" if len(user_path) > 60 else user_path
        if len(text) > MAX_PATH_CHARS:
            raise self._refuse(shown, f"it is too long ({len(text)} characters; the limit is {MAX_PATH_CHARS})")
        for part in text.split("/"):
            size = len(part.encode("utf-8"))
            if size > MAX_NAME_BYTES:
                raise self._refuse(
                    shown, f"one of its names is too long ({size} bytes; the limit is {MAX_NAME_BYTES} per name)"
                )

    def _check_percent_escapes(self, user_path: str, text: str) -> None:
        # Escapes are never decoded; refuse the ones that would spell path syntax if a
        # later layer did decode them ('%2e%2e', '%2f', '%252e', overlong '%c0%ae').
        for match in _PERCENT_ESCAPE.finditer(text):
            byte = int(match.group(1), 16)
            if chr(byte) in "./\\%" or byte < 0x20 or byte >= 0x7F:
                raise self._refuse(
                    user_path,
                    f"it contains the percent-encoded {match.group(0)!r}; percent-encoding is "
                    "not decoded, write the path literally",
                )

    def _check_dotdot(self, user_path: str, text: str) -> None:
        depth = 0
        for part in text.split("/"):
            if part in ("", "."):
                continue
            depth = depth - 1 if part == ".." else depth + 1
            if depth < 0:
                raise self._refuse(user_path, "its '..' segments climb above the workspace root")


def _is_within(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)
