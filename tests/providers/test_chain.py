"""ChainProvider: which failures move a call to the next provider, and which do not.

Scripted members raise each ``ProviderError`` kind; the real SDKs meet real failures
through loopback servers: the recorded Anthropic stream whose first event is
``overloaded_error`` and the one that fails mid-stream (both from vercel/ai's
``packages/anthropic/src/anthropic-language-model.test.ts``, see their sidecars in
``recorded/anthropic``), and a 529 answer of the mock Anthropic server after the SDK's
retries. Histories that cross providers use the recorded signed-thinking stream of
claude-sonnet-4 (charmbracelet/fantasy) and DeepSeek's ``reasoning_content`` stream
(vercel/ai).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mock_servers import HttpError, MockAnthropic, MockOpenAI, Reply

from jupyter_brain.providers.anthropic import AnthropicProvider
from jupyter_brain.providers.base import ProviderError, ProviderResult, StreamEvent, collect_stream
from jupyter_brain.providers.capabilities import Cloneable, provider_secrets
from jupyter_brain.providers.chain import FALLBACK_KINDS, ChainProvider, FallbackNotice, UnavailableProvider
from jupyter_brain.providers.openai_compat import OpenAICompatProvider
from jupyter_brain.providers.registry import get_provider
from jupyter_brain.providers.scripted import ScriptedProvider
from tests.providers.replay import Body, ReplayServer, recording

ALL_KINDS = ("auth", "rate_limit", "overloaded", "server", "bad_request", "timeout", "connection", "stream", "other")
WEATHER = {"name": "weather", "description": "Get the weather", "input_schema": {"type": "object"}}
QUESTION = [{"role": "user", "content": "What's the weather in Florence, Italy?"}]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                "JUPYTER_BRAIN_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def failing(kind: str, model: str = "primary", status: int | None = None) -> ScriptedProvider:
    return ScriptedProvider([{"error": {"kind": kind, "message": f"{kind}!", "status_code": status}}], model=model)


def chain(*members: Any, **kw: Any) -> tuple[ChainProvider, list[FallbackNotice]]:
    notices: list[FallbackNotice] = []
    return ChainProvider(list(members), on_fallback=notices.append, **kw), notices


def streamed(provider: Any, messages: list | None = None, tools: list | None = None, **kw: Any) -> ProviderResult:
    return collect_stream(provider.generate_stream(messages or QUESTION, tools or [], **kw))


class MidStream:
    """Streams some text, then fails (as a dropped connection or an error event would)."""

    name, model, supports_native_thinking = "flaky", "m1", False

    def __init__(self, kind: str = "overloaded") -> None:
        self.kind = kind

    def generate(self, messages: list, tools: list, **kw: Any) -> ProviderResult:
        raise NotImplementedError

    def generate_stream(self, messages: list, tools: list, **kw: Any) -> Iterator[StreamEvent]:
        yield StreamEvent(type="text", text="partial")
        raise ProviderError("dropped", kind=self.kind)  # type: ignore[arg-type]


# -- which failures fall through ------------------------------------------------------

@pytest.mark.parametrize("kind", ALL_KINDS)
@pytest.mark.parametrize("stream", [True, False])
def test_each_error_kind_before_output(kind: str, stream: bool) -> None:
    backup = ScriptedProvider(["from the backup"], model="backup")
    provider, notices = chain(failing(kind, status=529 if kind == "overloaded" else None), backup)
    call = streamed if stream else (lambda p: p.generate(QUESTION, []))
    if kind in FALLBACK_KINDS:
        assert call(provider).text == "from the backup"
        assert notices == [FallbackNotice("scripted:primary", "scripted:backup", kind, f"{kind}!",
                                          529 if kind == "overloaded" else None)]
        assert (provider.name, provider.model) == ("scripted", "backup")
    else:  # the request itself is wrong (bad_request) or the failure is unknown: no switch
        with pytest.raises(ProviderError) as info:
            call(provider)
        assert info.value.kind == kind and not notices and not backup.calls
        assert provider.model == "primary"
    assert {"bad_request", "other"}.isdisjoint(FALLBACK_KINDS) and {"auth", "overloaded"} <= FALLBACK_KINDS


def test_failure_after_output_is_raised_not_switched() -> None:
    flaky, backup = MidStream(), ScriptedProvider(["never"], model="backup")
    provider, notices = chain(flaky, backup)
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        for event in provider.generate_stream(QUESTION, []):
            seen.append(event)
    assert info.value.kind == "overloaded" and [e.text for e in seen] == ["partial"]
    assert not notices and not backup.calls
    assert provider.active is flaky  # the agent's retry calls the chain again: the same member


def test_every_member_failing_raises_the_last_error_naming_the_others() -> None:
    provider, notices = chain(failing("overloaded", "a", 529), failing("connection", "b"))
    with pytest.raises(ProviderError) as info:
        streamed(provider)
    assert info.value.kind == "connection" and info.value.status_code is None  # the last one's, for retry.py
    assert "scripted:a: overloaded (overloaded!)" in str(info.value)
    assert [n.next for n in notices] == ["scripted:b"]


def test_a_member_without_a_key_is_reported_and_skipped() -> None:
    missing = UnavailableProvider("anthropic", "claude-sonnet-4-6", ProviderError("no key", kind="auth"))
    provider, notices = chain(missing, ScriptedProvider(["local answer"], model="qwen"))
    assert streamed(provider).text == "local answer"
    assert notices[0].failed == "anthropic:claude-sonnet-4-6" and notices[0].kind == "auth"


# -- which member is asked ------------------------------------------------------------

def test_the_chain_stays_with_the_fallback_then_tries_the_primary_again() -> None:
    now = [0.0]
    primary = ScriptedProvider([{"error": {"kind": "overloaded", "message": "busy"}}, "primary is back"], model="p")
    backup = ScriptedProvider(["b1", "b2"], model="b")
    provider, notices = chain(primary, backup, retry_primary_after_s=60, clock=lambda: now[0])
    assert [streamed(provider).text, streamed(provider).text] == ["b1", "b2"]
    assert len(primary.calls) == 1 and len(notices) == 1  # no failing request per step
    now[0] = 61.0
    assert streamed(provider).text == "primary is back" and provider.model == "p"


def test_name_model_and_native_thinking_are_the_active_members() -> None:
    native = failing("overloaded", "claude")
    native.name, native.supports_native_thinking = "anthropic", True  # type: ignore[misc]
    provider, _ = chain(native, ScriptedProvider(["ok"], model="qwen"))
    assert (provider.name, provider.model, provider.supports_native_thinking) == ("anthropic", "claude", True)
    streamed(provider)
    assert (provider.name, provider.model, provider.supports_native_thinking) == ("scripted", "qwen", False)
    with pytest.raises(AttributeError):
        provider.name = "x"


def test_clone_has_its_own_state_and_script() -> None:
    primary = failing("overloaded")
    provider, notices = chain(primary, ScriptedProvider(["one"], model="b"))
    copy = provider.clone()
    streamed(provider)
    assert isinstance(provider, Cloneable) and copy.model == "primary" and copy.on_fallback is None
    assert streamed(copy).text == "one" and not primary.calls[1:]  # its members are fresh copies


def test_the_members_keys_are_masked() -> None:
    with MockAnthropic() as server:
        a = AnthropicProvider(api_key="sk-ant-one", base_url=server.url)
        b = OpenAICompatProvider("m", api_key="sk-two", base_url=server.url + "/v1")
        assert provider_secrets(ChainProvider([a, b])) == ("sk-ant-one", "sk-two")


class SDKStream:
    """An SDK-like stream object: an iterator with ``close`` (garbage collection does not close it)."""

    def __init__(self) -> None:
        self.closed = False

    def __iter__(self) -> SDKStream:
        return self

    def __next__(self) -> StreamEvent:
        return StreamEvent(type="text", text="more")

    def close(self) -> None:
        self.closed = True


def test_the_stream_of_a_member_is_closed_when_the_caller_stops() -> None:
    sdk_stream = SDKStream()
    member = ScriptedProvider(model="endless")
    member.generate_stream = lambda *a, **kw: sdk_stream  # type: ignore[method-assign]
    stream = ChainProvider([member]).generate_stream(QUESTION, [])
    next(stream)
    stream.close()  # a cancel or Ctrl-C in the agent
    assert sdk_stream.closed


def test_a_chain_needs_providers() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ChainProvider([])
    with pytest.raises(TypeError, match="not str"):
        ChainProvider(["anthropic"])  # type: ignore[list-item]


# -- by name --------------------------------------------------------------------------

def test_get_provider_builds_a_chain_with_models_per_member() -> None:
    provider = get_provider("anthropic:claude-haiku-4-5, ollama:qwen3:4b")
    assert isinstance(provider, ChainProvider)
    first, second = provider.members
    assert isinstance(first, UnavailableProvider) and first.error.kind == "auth"  # no ANTHROPIC_API_KEY here
    assert (first.model, second.name, second.model) == ("claude-haiku-4-5", "ollama", "qwen3:4b")
    assert get_provider("scripted,ollama", "only-the-first").members[0].model == "only-the-first"  # type: ignore[attr-defined]


@pytest.mark.parametrize(("spec", "error", "needle"), [
    ("anthropic,nosuch", ValueError, "unknown provider 'nosuch' in the chain"),
    ("anthropic,", ValueError, "names separated by commas"),
    ("anthropic,openai", ProviderError, "no provider of the chain 'anthropic,openai' can be used"),
])
def test_bad_chains_are_clear_errors(spec: str, error: type, needle: str) -> None:
    with pytest.raises(error, match=needle):
        get_provider(spec)


# -- real SDKs, real recorded failures ----------------------------------------------------

def test_recorded_overloaded_first_event_falls_through_to_an_openai_server() -> None:
    with ReplayServer(anthropic=True) as anthropic, MockOpenAI(models=["qwen3:4b"]) as openai:
        anthropic.push(Body(recording("anthropic/vercel-overloaded-first-event").body()))
        openai.push(Reply(text=["It is ", "sunny."]))
        provider, notices = chain(AnthropicProvider("claude-sonnet-4-6", api_key="sk-ant-x", base_url=anthropic.url),
                                  OpenAICompatProvider("qwen3:4b", api_key="k", base_url=openai.url + "/v1"))
        assert streamed(provider).text == "It is sunny."
    assert notices[0].kind == "overloaded" and notices[0].failed == "anthropic:claude-sonnet-4-6"
    assert notices[0].next == "openai:qwen3:4b"


def test_recorded_overload_mid_stream_is_not_switched() -> None:
    with ReplayServer(anthropic=True) as anthropic, MockOpenAI() as openai:
        anthropic.push(Body(recording("anthropic/vercel-overloaded-mid-stream").body()))
        provider, notices = chain(AnthropicProvider("claude-x", api_key="sk-ant-x", base_url=anthropic.url),
                                  OpenAICompatProvider("m", api_key="k", base_url=openai.url + "/v1"))
        with pytest.raises(ProviderError) as info:
            streamed(provider)
        assert info.value.kind == "overloaded" and not notices and not openai.bodies("/chat/completions")


def test_529_after_the_sdk_retries_falls_through() -> None:
    with MockAnthropic() as anthropic, MockOpenAI() as openai:
        fast = {"retry-after-ms": "10"}
        anthropic.push(HttpError(529, "Overloaded", headers=fast), HttpError(529, "Overloaded", headers=fast))
        openai.push(Reply(text="answered"))
        provider, notices = chain(AnthropicProvider(api_key="sk-ant-x", base_url=anthropic.url, max_retries=1),
                                  OpenAICompatProvider("m", api_key="k", base_url=openai.url + "/v1"))
        assert provider.generate(QUESTION, []).text == "answered"
        assert len(anthropic.requests) == 2  # the SDK's own retry came first
    assert (notices[0].kind, notices[0].status_code) == ("overloaded", 529)


def test_signed_thinking_is_not_sent_to_the_openai_server_and_comes_back_to_anthropic() -> None:
    """A loop Anthropic began (recorded signed thinking + tool call), continued by an
    OpenAI-compatible server after a 529, then a new question answered by Anthropic."""
    with ReplayServer(anthropic=True) as anthropic, MockOpenAI() as openai:
        anthropic.push(Body(recording("anthropic/fantasy-thinking-tool-use").body()), HttpError(529, "Overloaded"))
        openai.push(Reply(text="Sunny, 24°C."))
        claude = AnthropicProvider("claude-sonnet-4", api_key="sk-ant-x", base_url=anthropic.url, max_retries=0)
        provider, notices = chain(claude, OpenAICompatProvider("m", api_key="k", base_url=openai.url + "/v1"))
        step1 = streamed(provider, QUESTION, [WEATHER], thinking_budget=2048)
        signature = step1.thinking[0].signature
        assert signature and step1.tool_calls
        call = step1.tool_calls[0]
        history = [*QUESTION, step1.to_message(),
                   {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": "sunny, 24°C"}]
        step2 = streamed(provider, history, [WEATHER], thinking_budget=2048)
        assert step2.text == "Sunny, 24°C." and notices[0].kind == "overloaded"
        sent = openai.bodies("/chat/completions")[0]
        assert signature not in json.dumps(sent) and "thinking" not in json.dumps(sent["messages"])
        assert sent["messages"][1]["tool_calls"][0]["id"] == sent["messages"][2]["tool_call_id"] == call.id
        history += [step2.to_message(), {"role": "user", "content": "And tomorrow?"}]
        anthropic.push(Body(recording("anthropic/sdk-text-no-final-blank-line").body()))
        fresh = AnthropicProvider("claude-sonnet-4", api_key="sk-ant-x", base_url=anthropic.url, max_retries=0)
        streamed(ChainProvider([fresh]), history, [WEATHER], thinking_budget=2048)
        body = anthropic.bodies("/v1/messages")[-1]
    first_reply = body["messages"][1]["content"]
    assert first_reply[0] == {"type": "thinking", "thinking": step1.thinking[0].text, "signature": signature}
    assert body["thinking"]["type"] == "enabled"  # a new question: thinking is fine again


def test_openai_reasoning_is_not_sent_to_anthropic_and_the_loop_goes_on_without_thinking() -> None:
    """DeepSeek's recorded reasoning + tool call, continued by Anthropic after a 503."""
    with ReplayServer(["deepseek-reasoner"]) as deepseek, MockAnthropic() as anthropic:
        deepseek.push(Body(recording("deepseek/vercel-deepseek-tool-call").body()), HttpError(503, "down"))
        anthropic.push(Reply(text="It is foggy."))
        ds = OpenAICompatProvider("deepseek-reasoner", api_key="k", base_url=deepseek.url + "/v1", max_retries=0)
        claude = AnthropicProvider("claude-sonnet-4-6", api_key="sk-ant-x", base_url=anthropic.url, max_retries=0)
        provider, notices = chain(ds, claude)
        step1 = streamed(provider, QUESTION, [WEATHER])
        assert step1.thinking and not step1.thinking[0].signature
        call = step1.tool_calls[0]
        history = [*QUESTION, step1.to_message(),
                   {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": "foggy"}]
        assert streamed(provider, history, [WEATHER], thinking_budget=2048).text == "It is foggy."
        body = anthropic.bodies("/v1/messages")[0]
    assert notices[0].kind == "server" and notices[0].next == "anthropic:claude-sonnet-4-6"
    assistant = body["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["tool_use"]  # the reasoning stayed behind
    assert step1.thinking[0].text not in json.dumps(body)
    assert "thinking" not in body  # a loop another provider began: no native thinking this request
    assert body["messages"][2]["content"][0]["tool_use_id"] == assistant[0]["id"]
