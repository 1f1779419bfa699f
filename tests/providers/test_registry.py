"""get_provider: names, the ``auto`` choice, and lazy SDK imports."""

from __future__ import annotations

import subprocess
import sys

import pytest

from jupyter_brain.providers.anthropic import DEFAULT_MODEL, AnthropicProvider
from jupyter_brain.providers.base import LLMProvider, ProviderError
from jupyter_brain.providers.openai_compat import OpenAICompatProvider
from jupyter_brain.providers.registry import PROVIDER_NAMES, get_provider

ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV:
        monkeypatch.delenv(var, raising=False)


def test_anthropic_by_name_with_model_and_options() -> None:
    provider = get_provider("anthropic", api_key="k", base_url="http://127.0.0.1:1", max_tokens=123)
    assert isinstance(provider, AnthropicProvider) and isinstance(provider, LLMProvider)
    assert provider.model == DEFAULT_MODEL and provider.max_tokens == 123
    assert get_provider("Anthropic", "claude-other", api_key="k").model == "claude-other"


@pytest.mark.parametrize("name", ["openai", "ollama", "vllm"])
def test_openai_compatible_names(name: str) -> None:
    provider = get_provider(name, "some-model", api_key="k")
    assert isinstance(provider, OpenAICompatProvider) and isinstance(provider, LLMProvider)
    assert (provider.name, provider.model) == (name, "some-model")


def test_scripted_is_built_lazily() -> None:
    from jupyter_brain.providers import scripted  # an import error of our own module fails here

    provider = get_provider("scripted", responses=["hello"])
    assert isinstance(provider, scripted.ScriptedProvider)
    assert provider.generate([{"role": "user", "content": "hi"}], []).text == "hello"


def test_auto_prefers_anthropic_when_its_key_is_set(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k1")
    monkeypatch.setenv("OPENAI_API_KEY", "k2")
    assert get_provider().name == "anthropic"


@pytest.mark.parametrize("var", ["OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"])
def test_auto_falls_back_to_openai_compatible(monkeypatch, var: str) -> None:
    monkeypatch.setenv(var, "http://127.0.0.1:11434/v1" if "URL" in var else "k")
    provider = get_provider("auto")
    assert isinstance(provider, OpenAICompatProvider) and provider.name == "openai"
    if "URL" in var:
        assert provider.base_url == "http://127.0.0.1:11434/v1"


def test_auto_without_any_configuration_explains_the_three_ways() -> None:
    with pytest.raises(ProviderError) as info:
        get_provider("auto")
    message = info.value.message
    assert info.value.kind == "auth"
    assert "ANTHROPIC_API_KEY" in message and "OPENAI_API_KEY" in message
    assert "Ollama" in message and "OPENAI_BASE_URL" in message
    assert "scripted" in message


def test_unknown_name_lists_the_choices() -> None:
    with pytest.raises(ValueError) as info:
        get_provider("gemini")
    for name in PROVIDER_NAMES:
        assert name in str(info.value)


def test_importing_the_registry_does_not_import_the_sdks() -> None:
    code = (
        "import sys\n"
        "import jupyter_brain.providers.registry\n"
        "import jupyter_brain.providers.anthropic, jupyter_brain.providers.openai_compat\n"
        "loaded = sorted(m for m in ('anthropic', 'openai') if m in sys.modules)\n"
        "print(','.join(loaded) or 'none')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "none"
