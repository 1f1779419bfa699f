"""Pick a provider by name. SDKs are imported only when their provider is built.

Importing this module must stay cheap: a notebook loads the extension long before (and
often without) ever talking to a model, and the offline ``scripted`` provider needs
neither SDK.
"""

from __future__ import annotations

import os
from typing import Any

from jupyter_brain.providers.base import LLMProvider, ProviderError

PROVIDER_NAMES = ("auto", "anthropic", "openai", "ollama", "vllm", "scripted")

# The offline path is spelled as in the README (its "Start here" and "Choosing a model"),
# which tests/providers/test_registry.py checks.
_NO_MODEL_CONFIGURED = (
    "no model is configured. Choose one of:\n"
    "  1. an API key: set ANTHROPIC_API_KEY (Claude) or OPENAI_API_KEY (OpenAI);\n"
    "  2. a local OpenAI-compatible server such as Ollama or vLLM: set OPENAI_BASE_URL "
    "(or JUPYTER_BRAIN_BASE_URL), e.g. http://localhost:11434/v1, or use "
    "--provider ollama / --provider vllm;\n"
    "  3. no key, offline: the `scripted` provider: `from jupyter_brain import ScriptedProvider`, "
    "`bot = ScriptedProvider([...])`, then `%%agent --provider bot` (in Python: AgentHarness(provider=bot)).\n"
    "See \"Choosing a model\" in the README, and the example notebooks in notebooks/ "
    "(start with quickstart.ipynb), which run offline this way."
)


def get_provider(name: str = "auto", model: str | None = None, **options: Any) -> LLMProvider:
    """Build the provider called ``name``; ``options`` go to its constructor.

    ``auto`` prefers Anthropic when ANTHROPIC_API_KEY is set, then an OpenAI-compatible
    server when OPENAI_API_KEY, OPENAI_BASE_URL or JUPYTER_BRAIN_BASE_URL is set. With a
    base URL and no key (a local server), the model is the first one the server lists at
    ``/v1/models`` unless ``model`` names one. A comma-separated name is a provider chain
    (``get_chain``).
    """
    if "," in name:
        if options:
            raise ValueError(f"options ({', '.join(options)}) cannot go to every provider of a chain; "
                             "build the members yourself and pass them to ChainProvider([...])")
        return get_chain(name, model)
    key = name.strip().lower()
    if key == "auto":
        key = _auto_choice()
    if key == "anthropic":
        from jupyter_brain.providers.anthropic import AnthropicProvider

        return AnthropicProvider(model, **options)
    if key in ("openai", "ollama", "vllm"):
        from jupyter_brain.providers.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(model, preset=key, **options)
    if key == "scripted":
        from jupyter_brain.providers.scripted import ScriptedProvider

        if model is not None:
            options.setdefault("model", model)
        return ScriptedProvider(**options)
    raise ValueError(f"unknown provider {name!r}; valid choices: {', '.join(PROVIDER_NAMES)}")


def get_chain(spec: str, model: str | None = None) -> LLMProvider:
    """``"anthropic,ollama"`` → ``ChainProvider([anthropic, ollama])``, tried in that order.

    A member may name its model after a colon (``anthropic:claude-haiku-4-5``,
    ``ollama:qwen3:4b``); ``model`` is the first member's unless it names its own. A member
    that cannot be built for lack of a key stays in the chain as unavailable (each call
    then reports it and goes on), unless no member can be built at all.
    """
    from jupyter_brain.providers.chain import ChainProvider, UnavailableProvider

    parts = [p.strip() for p in spec.split(",")]
    if len(parts) < 2 or not all(parts):
        raise ValueError(f"a provider chain is names separated by commas, e.g. 'anthropic,ollama'; got {spec!r}")
    members: list[LLMProvider] = []
    failures: list[ProviderError] = []
    for position, part in enumerate(parts):
        name, _, own_model = part.partition(":")
        member_model = own_model or (model if position == 0 else None)
        if name.strip().lower() not in PROVIDER_NAMES:
            raise ValueError(
                f"unknown provider {name!r} in the chain {spec!r}; valid choices: {', '.join(PROVIDER_NAMES)}"
            )
        try:
            members.append(get_provider(name, member_model))
        except ProviderError as exc:
            failures.append(exc)
            members.append(UnavailableProvider(name.strip().lower(), member_model, exc))
    if len(failures) == len(parts):
        reasons = "; ".join(f"{p}: {e.message}" for p, e in zip(parts, failures, strict=True))
        raise ProviderError(f"no provider of the chain {spec!r} can be used: {reasons}", kind=failures[-1].kind)
    return ChainProvider(members)


def configured_provider() -> str | None:
    """The provider ``auto`` would pick from the environment, or None when no model is
    configured (the example notebooks fall back to a scripted model then)."""
    try:
        return _auto_choice()
    except ProviderError:
        return None


def _auto_choice() -> str:
    if os.environ.get("ANTHROPIC_API_KEY"):
        return "anthropic"
    if any(
        os.environ.get(var)
        for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL")
    ):
        return "openai"
    raise ProviderError(_NO_MODEL_CONFIGURED, kind="auth")
