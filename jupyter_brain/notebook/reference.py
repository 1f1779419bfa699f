"""The reference pages of the documentation site, written from the code itself.

The flags come from the argument parsers, the settings from ``settings.SETTINGS`` (the
``AgentMagics`` traitlets are built from it), the subcommands from ``%agent help``'s table,
the API from the package's public names: a flag or a setting added in the code is in the
docs at the next build, and one removed is gone (``docs/hooks/reference.py`` puts these
pages where their markers stand; issue #39).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..settings import SETTINGS


def _cell(text: Any) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _value(action: argparse.Action) -> str:
    if action.choices is not None:
        return "|".join(map(str, action.choices))
    if action.nargs == 0:
        return ""
    return str(action.metavar or action.dest.upper())


def _default(action: argparse.Action) -> str:
    setting = SETTINGS.get(action.dest)
    if setting is not None and setting.flag is not None:
        return f"`AgentMagics.{setting.name}` ({setting.default!r})"
    if action.nargs == 0 or action.default in (None, [], False, argparse.SUPPRESS):
        return ""
    default = ",".join(action.default) if isinstance(action.default, list) else action.default
    return f"`{default}`"


def flags_table(parser: argparse.ArgumentParser) -> str:
    """Every flag of ``parser``: its value, its default (a kernel setting's name when the
    flag overrides one) and its help."""
    rows = ["| flag | value | default | what it does |", "| --- | --- | --- | --- |"]
    for action in parser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        flags = ", ".join(f"`{f}`" for f in action.option_strings)
        value = _value(action)
        rows.append(f"| {flags} | {f'`{_cell(value)}`' if value else ''} | {_cell(_default(action))} "
                    f"| {_cell(action.help or '')} |")
    return "\n".join(rows)


def usage(parser: argparse.ArgumentParser) -> str:
    """The parser's usage line, as ``--help`` prints it, in a code block."""
    return "```\n" + parser.format_usage().removeprefix("usage: ").strip() + "\n```"


def settings_table() -> str:
    """Every ``AgentMagics`` setting: type, default, allowed values, its cell flag, help."""
    rows = ["| setting | type | default | values | cell flag | what it sets |", "| --- | --- | --- | --- | --- | --- |"]
    for s in SETTINGS.values():
        allowed = "|".join(s.allowed())
        flag = " / ".join(f"`{f}`" for f in (s.flag, s.off_flag) if f)
        rows.append(f"| `{s.name}` | {s.type.__name__} | `{s.default!r}` | {f'`{_cell(allowed)}`' if allowed else ''} "
                    f"| {flag} | {_cell(s.help)} |")
    return "\n".join(rows)


def subcommands_table() -> str:
    """``%agent SUBCOMMAND``: the table ``%agent help`` prints."""
    from .subcommands.help_text import SUBCOMMANDS

    rows = ["| `%agent …` | what it does |", "| --- | --- |"]
    rows += [f"| `{_cell(name)}` | {_cell(text)} |" for name, text in SUBCOMMANDS.items()]
    return "\n".join(rows)


def api_directives() -> str:
    """One mkdocstrings directive per public name of ``jupyter_brain`` (``_PUBLIC``), in
    the order the package lists them, and its two decorators."""
    import jupyter_brain

    public: dict[str, str] = jupyter_brain._PUBLIC
    lines = [f"::: {module}.{name}" for name, module in public.items() if name[0].isupper() or name == "get_provider"]
    lines += ["::: jupyter_brain.tool", "::: jupyter_brain.web_search"]
    return "\n\n".join(lines)


def pages() -> dict[str, str]:
    """Each marker of the docs' Markdown and what replaces it."""
    from .parsers import agent_parser, compare_parser

    return {
        "<!-- reference: agent usage -->": usage(agent_parser()),
        "<!-- reference: agent flags -->": flags_table(agent_parser()),
        "<!-- reference: compare usage -->": usage(compare_parser()),
        "<!-- reference: compare flags -->": flags_table(compare_parser()),
        "<!-- reference: subcommands -->": subcommands_table(),
        "<!-- reference: settings -->": settings_table(),
        "<!-- reference: api -->": api_directives(),
    }
