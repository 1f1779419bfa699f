"""What ``--provider`` names: a registered provider, or a kernel variable holding one.

A variable may hold a provider instance or a provider name (``bot = "auto"``); for
``%%compare`` also a dict strategy -> provider (see ``compare_cell``). Errors name the
magic (``prog``) they came from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from ..providers.base import LLMProvider
    from ..settings_model import AgentOptions
    from .provider_cache import ProviderCache


def resolve_provider(options: AgentOptions, user_ns: dict[str, Any], prog: str = "%%agent",
                     *, cache: ProviderCache | None = None) -> LLMProvider:
    """The provider of a turn: ``options.provider`` as a variable first, then as a name.

    With ``cache`` (the kernel's, ``AgentMagics.provider_cache``), a name reuses the provider
    an earlier cell built for the same configuration (``provider_cache.py``)."""
    from ..providers.base import LLMProvider, ProviderError

    name = options.provider
    candidate = user_ns.get(name) if name.isidentifier() else None
    if isinstance(candidate, str):  # a variable holding a provider name, e.g. "auto"
        name, candidate = candidate, None
    if candidate is not None and not isinstance(candidate, LLMProvider) and _is_provider_name(name):
        candidate = None  # `import openai` shadows nothing: --provider openai still names the provider
    if candidate is not None:
        if isinstance(candidate, LLMProvider):
            return candidate
        raise UsageError(f"{prog}: variable {name!r} is a {type(candidate).__name__}, not an LLM provider")
    from ..providers.registry import get_provider
    from ..providers.scripted import ScriptedProvider

    model = options.model
    try:
        if cache is None:
            provider = get_provider(name, model)
        else:
            provider = cache.get(name, model, lambda: get_provider(name, model))
    except ValueError as exc:
        raise UsageError(f"{prog}: {exc} (or the name of a variable holding a provider)") from None
    except ProviderError as exc:
        raise UsageError(f"{prog}: {exc.message}") from None
    if isinstance(provider, ScriptedProvider) and not provider.has_script:  # built from its name alone
        raise UsageError(f"{prog}: --provider scripted has no script, so it could never answer: put one in a "
                         "variable (from jupyter_brain import ScriptedProvider; bot = ScriptedProvider(['an answer', "
                         "...])) and use --provider bot")
    return provider


def _is_provider_name(name: str) -> bool:
    from ..providers.registry import PROVIDER_NAMES

    return name.strip().lower() in PROVIDER_NAMES


def check_provider(candidate: Any, label: str, prog: str) -> None:
    """A usage error unless ``candidate`` is an LLM provider instance."""
    from ..providers.base import LLMProvider

    if not isinstance(candidate, LLMProvider):
        raise UsageError(f"{prog}: {label} is a {type(candidate).__name__}, not an LLM provider")
