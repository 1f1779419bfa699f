"""Where the admin's policy is: ``$JUPYTER_BRAIN_POLICY``, else ``jupyter_brain_policy.json``
in Jupyter's config path, system folders first (``/etc/jupyter`` before ``~/.jupyter``:
the admin's file wins over one a user drops in their home). Plain Python, no pydantic:
the extension looks here when it loads, and a kernel without a policy loads nothing more.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

POLICY_ENV = "JUPYTER_BRAIN_POLICY"
POLICY_NAME = "jupyter_brain_policy.json"
PERMISSIONS = ("read-only", "ask", "auto")  # strictest first (settings.PERMISSION_CHOICES)


class PolicyError(ValueError):
    """The policy cannot be used as written (one line, naming the file)."""


def candidate_paths(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Where the policy may be, in the order looked at."""
    env = os.environ if environ is None else environ
    if env.get(POLICY_ENV):
        return [Path(env[POLICY_ENV]).expanduser()]
    from jupyter_core.paths import jupyter_config_path

    return [Path(folder) / POLICY_NAME for folder in reversed(jupyter_config_path())]


def find_policy(environ: Mapping[str, str] | None = None) -> Path | None:
    """The policy file in force, or None. ``$JUPYTER_BRAIN_POLICY`` naming a missing file
    is an error: the admin meant a policy, and the agent must not run without it."""
    env = os.environ if environ is None else environ
    paths = candidate_paths(env)
    if env.get(POLICY_ENV):
        if not paths[0].is_file():
            raise PolicyError(f"policy {paths[0]} (${POLICY_ENV}) does not exist")
        return paths[0]
    return next((p for p in paths if p.is_file()), None)
