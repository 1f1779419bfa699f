"""The memory a ``%%agent`` cell gets, from ``AgentMagics.memory`` (off, manual, auto).

The store is the session manager's (``<data_dir>/memory.sqlite``): one per project folder,
shared by every session and kernel there. A store that cannot open is reported and the
cell runs without memory.
"""

from __future__ import annotations

import logging
from typing import Any

from ..providers.capabilities import provider_secrets


def memory_roles(manager: Any, mode: str, provider: Any) -> dict[str, Any]:
    """``memory_retriever`` / ``memory_extractor`` keywords for the cell's harness."""
    if mode == "off":
        return {}
    try:
        return dict(manager.memory.roles(mode, provider, secrets=provider_secrets(provider)))
    except Exception as exc:  # noqa: BLE001 - memory is optional: the turn runs without it
        logging.getLogger("jupyter_brain.memory").warning("memory unavailable: %s", exc)
        print(f"note: memory is off for this cell ({exc})")
        return {}
