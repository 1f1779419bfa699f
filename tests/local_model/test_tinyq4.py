"""The OpenAI-compatible provider against a second, independently written real server: tinyq4.

Provider-level (no kernel, no agent turn with its long system prompt): tinyq4 is slow on a
loaded machine (mostly prompt processing), so every request is a short message with a
``max_tokens`` of at most 16, and there are few of them. Nothing here asserts the answer's
text or how long anything took. Its wire (no finish_reason, no usage, no ids) is
recorded in ``tests/providers/recorded/tinyq4`` and checked there without the server.
"""

from __future__ import annotations

import pytest

from jupyter_brain.providers.base import ProviderError, ProviderResult, StreamEvent, close_stream
from jupyter_brain.providers.openai_compat import OpenAICompatProvider
from jupyter_brain.providers.registry import get_provider

from .server import LocalModelServer, RecordingProxy, _content, _events
from .tinyq4_server import free_port_everywhere

pytestmark = [pytest.mark.local_model, pytest.mark.timeout(900)]

ANSWER = 8  # max_tokens of an answer
INTERRUPTED = 16  # max_tokens of the answer a test interrupts (the server goes on to this bound)
HI = [{"role": "user", "content": "Hi"}]
REQUEST_TIMEOUT_S = 600.0


@pytest.fixture(autouse=True)
def only_the_local_server(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def bounded(server: LocalModelServer, max_tokens: int, **kw: object) -> OpenAICompatProvider:
    return OpenAICompatProvider(server.model, base_url=server.base_url, max_tokens=max_tokens,  # type: ignore[arg-type]
                                max_retries=0, **kw)


def streamed(provider: OpenAICompatProvider) -> tuple[list[StreamEvent], ProviderResult]:
    events = list(provider.generate_stream(HI, [], timeout_s=REQUEST_TIMEOUT_S))
    assert events[-1].type == "done" and events[-1].result is not None
    assert all(e.type != "done" for e in events[:-1])
    return events[:-1], events[-1].result


def test_auto_finds_the_model_and_streams_an_answer(tinyq4: LocalModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with RecordingProxy(tinyq4.port) as proxy:  # keeps the wire: how many tokens came
        monkeypatch.setenv("OPENAI_BASE_URL", proxy.base_url)  # the only model setting, no key
        provider = get_provider("auto", max_tokens=ANSWER)
        assert isinstance(provider, OpenAICompatProvider) and provider.model == ""
        events, result = streamed(provider)
    assert provider.model == tinyq4.model  # from GET /v1/models
    assert [e.path for e in proxy.exchanges] == ["/v1/models", "/v1/chat/completions"] and not proxy.refused()
    tokens = sum(1 for event in _events(bytes(proxy.exchanges[-1].response)) if _content(event))
    texts = [e.text for e in events if e.type == "text"]
    assert texts and "".join(texts) == result.text  # it streamed, in the pieces the result holds
    # no usage on tinyq4's wire: counted locally, and marked so
    assert result.usage.estimated and result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    # no finish_reason either: inferred from the length (one token a chunk) and marked so
    assert result.stop_reason_inferred
    assert result.stop_reason == ("max_tokens" if tokens >= ANSWER else "end_turn")


def test_a_request_the_server_rejects_is_one_clear_bad_request(tinyq4: LocalModelServer) -> None:
    # tinyq4 takes only string contents; a figure goes to a model that takes images as
    # image parts, which it rejects before generating anything (HTTP 422)
    figure = [{"media_type": "image/png", "data": "iVBORw0KGgo="}]
    messages = [
        {"role": "user", "content": "Plot it."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "name": "plot", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "plot", "content": "done", "images": figure},
    ]
    provider = bounded(tinyq4, ANSWER, vision=True)
    with pytest.raises(ProviderError) as caught:
        list(provider.generate_stream(messages, [], timeout_s=REQUEST_TIMEOUT_S))
    error = caught.value
    assert error.kind == "bad_request" and error.status_code == 422 and not error.retryable
    assert "\n" not in str(error) and "content" in str(error)


def test_a_closed_port_is_a_connection_error() -> None:
    closed = free_port_everywhere()  # free: nothing listens there
    provider = OpenAICompatProvider("smollm2_q8", base_url=f"http://127.0.0.1:{closed}/v1", max_tokens=ANSWER,
                                    max_retries=0)
    with pytest.raises(ProviderError) as caught:
        list(provider.generate_stream(HI, [], timeout_s=30))
    assert caught.value.kind == "connection" and caught.value.retryable
    assert "\n" not in str(caught.value)


def test_ctrl_c_mid_stream_ends_cleanly_and_the_server_answers_the_next_request(tinyq4: LocalModelServer) -> None:
    stream = bounded(tinyq4, INTERRUPTED).generate_stream(
        [{"role": "user", "content": "Tell me a story."}], [], timeout_s=REQUEST_TIMEOUT_S)
    seen: list[StreamEvent] = []
    with pytest.raises(KeyboardInterrupt):
        for event in stream:
            seen.append(event)
            raise KeyboardInterrupt  # what Ctrl-C raises in the consuming thread
    close_stream(stream)  # what the loop does with a stream it stops reading: closes the connection
    assert len(seen) == 1 and seen[0].type != "done"  # interrupted at the first output, before the end
    _, result = streamed(bounded(tinyq4, 2))  # the server is still there and answers
    assert result.stop_reason_inferred  # a whole answer, ended by [DONE]
    assert tinyq4.process.poll() is None and "panicked" not in tinyq4.log_tail(20000)
