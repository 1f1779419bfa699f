"""Optional provider capabilities are Protocols, checked with isinstance, not getattr."""

from __future__ import annotations

from jupyter_brain.agent.context import summary_request
from jupyter_brain.compare import clone_provider
from jupyter_brain.providers.capabilities import (
    Cloneable,
    ExactTokenCount,
    NativeThinking,
    clone_for_run,
    has_native_thinking,
    provider_secrets,
)
from jupyter_brain.providers.scripted import ScriptedProvider


def test_scripted_clone_replays_from_the_start_with_every_queue():
    original = ScriptedProvider(["one", "two"], reflections=["looks fine"], summaries=["the summary"],
                                model="m", chunk_words=3)
    original.generate([{"role": "user", "content": "q"}], [])  # move the original's cursor
    copy = original.clone()
    assert copy is not original and isinstance(original, Cloneable)
    assert copy.generate([{"role": "user", "content": "q"}], []).text == "one"
    assert copy.generate(summary_request([{"role": "user", "content": "q"}]), []).text == "the summary"
    reflection = [{"role": "system", "content": "reflect", "kind": "reflection"}, {"role": "user", "content": "?"}]
    assert copy.generate(reflection, []).text == "looks fine"
    assert (copy.model, copy.chunk_words) == ("m", 3)


def test_a_repeating_script_stays_repeating_in_its_clone():
    copy = ScriptedProvider(["a", "b"], repeat=True).clone()
    texts = [copy.generate([{"role": "user", "content": "q"}], []).text for _ in range(3)]
    assert texts == ["a", "b", "a"]


def test_compare_clones_only_what_keeps_per_run_state():
    class Shared:  # an SDK-backed provider: thread-safe, shared by runs
        name = "shared"
        model = "m"

    shared = Shared()
    assert clone_for_run(shared) is shared and clone_provider(shared) is shared
    scripted = ScriptedProvider(["x"])
    assert clone_provider(scripted) is not scripted


def test_native_thinking_and_exact_counts_are_declared():
    class Native:
        supports_native_thinking = True

        def exact_input_tokens(self, messages, tools):
            return 7

    assert has_native_thinking(Native()) and isinstance(Native(), NativeThinking)
    assert isinstance(Native(), ExactTokenCount)
    assert not has_native_thinking(ScriptedProvider([]))
    assert not isinstance(ScriptedProvider([]), ExactTokenCount)


def test_configured_keys_are_secrets_placeholders_are_not(monkeypatch):
    from jupyter_brain.providers.anthropic import AnthropicProvider
    from jupyter_brain.providers.openai_compat import OpenAICompatProvider

    assert provider_secrets(AnthropicProvider(api_key="sk-ant-test-1234567890")) == ("sk-ant-test-1234567890",)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = OpenAICompatProvider(preset="ollama", model="llama3.2")
    assert provider_secrets(local) == ()
    assert provider_secrets(ScriptedProvider([])) == ()


def test_capability_checks_decide_as_typing_does():
    """The capabilities' fast ``isinstance`` (run on every turn) agrees with typing's own."""
    from typing import Protocol

    from jupyter_brain.providers import capabilities as caps
    from jupyter_brain.providers.anthropic import AnthropicProvider
    from jupyter_brain.providers.chain import ChainProvider
    from jupyter_brain.providers.scripted import ScriptedProvider

    class AllNone:  # method members set to None do not count; data members do
        supports_native_thinking = None
        api_key = None
        on_fallback = None
        members = ()
        exact_input_tokens = None
        clone = None
        web_search_tool = None

    protocols = [caps.NativeThinking, caps.ExactTokenCount, caps.Cloneable, caps.HoldsApiKey,
                 caps.Composite, caps.ReportsFallbacks, caps.ServerWebSearch]
    class Declared(caps.NativeThinking, caps.Cloneable):  # names the protocols, defines nothing
        pass

    objects = [object(), AllNone(), Declared(), ScriptedProvider([]), AnthropicProvider(api_key="sk-test"),
               ChainProvider([ScriptedProvider([]), ScriptedProvider([])])]
    typing_check = type(Protocol).__instancecheck__  # typing's own, which the metaclass replaces
    decided = set()
    for obj in objects:
        for protocol in protocols:
            expected = typing_check(protocol, obj)
            assert isinstance(obj, protocol) is expected, (type(obj).__name__, protocol.__name__)
            decided.add(expected)
    assert decided == {True, False}
