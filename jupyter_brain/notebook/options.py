"""A cell's settings: the kernel defaults overlaid with its flags, checked by ``AgentOptions``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..settings import CONFIG_KEYS

if TYPE_CHECKING:  # pydantic loads on the first cell, not with the extension
    from pydantic import ValidationError

    from ..settings_model import AgentOptions


def problems(exc: ValidationError) -> str:
    """pydantic's errors as one line: ``max_steps: Input should be ...; think: ...``."""
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


def validated(values: dict[str, Any], prog: str) -> AgentOptions:
    """``AgentOptions(**values)``, with an invalid value as a usage error of ``prog``."""
    from pydantic import ValidationError

    from ..settings_model import AgentOptions

    try:
        return AgentOptions(**values)
    except ValidationError as exc:
        raise UsageError(f"{prog}: {problems(exc)}") from None


def options_for(defaults: dict[str, Any], args: argparse.Namespace, prog: str = "%%agent") -> AgentOptions:
    """The turn's settings: each flag given on the cell wins over the kernel default."""
    values = dict(defaults)
    for key in CONFIG_KEYS:
        flag = getattr(args, key, None)
        if flag is not None:
            values[key] = flag
    return validated(values, f"{prog}: invalid setting")
