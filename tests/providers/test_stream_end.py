"""A Chat Completions stream with no finish_reason (tinyq4's wire), against the recorded bytes.

tinyq4 ends an answer with ``data: [DONE]`` and no finish_reason: that is an end, with the
stop reason inferred from max_tokens and marked so; the same stream without ``[DONE]`` is
still a dropped connection. The recordings are in ``recorded/tinyq4``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry
from jupyter_brain.providers.base import ProviderError, ProviderResult
from jupyter_brain.providers.openai_compat import OpenAICompatProvider
from jupyter_brain.providers.stream_end import DoneWatchingDecoder, inferred_finish
from tests.providers.replay import Body, ReplayServer, recording

MAX_TOKENS = recording("tinyq4/smollm2-max-tokens-no-finish-reason")
STOP = recording("tinyq4/smollm2-stop-no-finish-reason")
HI = [{"role": "user", "content": "Hi"}]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer(models=["smol_q8"]) as replay:
        yield replay


def provider(server: ReplayServer, **kw: object) -> OpenAICompatProvider:
    """As ``auto`` builds it for OPENAI_BASE_URL alone: no key, the model from /v1/models."""
    return OpenAICompatProvider(base_url=server.url + "/v1", max_retries=0, **kw)  # type: ignore[arg-type]


def result_of(p: OpenAICompatProvider) -> ProviderResult:
    events = list(p.generate_stream(HI, [], timeout_s=30))
    assert events[-1].type == "done" and events[-1].result is not None
    return events[-1].result


def test_the_recorded_wire_is_what_the_provider_must_handle() -> None:
    body = STOP.body().decode()
    assert body.startswith(":\n\n")  # a keep-alive comment before the first token
    assert '"finish_reason":null' in body and '"finish_reason":"' not in body
    assert '"id"' not in body and '"model"' not in body and '"index"' not in body and '"usage"' not in body
    assert body.endswith("data: [DONE]\n\n")


def test_done_without_finish_reason_at_max_tokens_is_an_inferred_length(server: ReplayServer) -> None:
    server.push(Body(MAX_TOKENS.body()))
    p = provider(server, max_tokens=8)
    result = result_of(p)
    assert p.model == "smol_q8"  # discovered at /v1/models
    assert (result.stop_reason, result.stop_reason_inferred) == ("max_tokens", True)
    assert result.usage.estimated and result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert server.bodies("/chat/completions")[0]["max_tokens"] == 8


def test_done_without_finish_reason_below_max_tokens_is_an_inferred_stop(server: ReplayServer) -> None:
    server.push(Body(MAX_TOKENS.body()))  # 8 tokens, of a bound of 9: the model stopped
    result = result_of(provider(server, max_tokens=9))
    assert (result.stop_reason, result.stop_reason_inferred) == ("end_turn", True)


def test_without_done_the_same_stream_is_a_dropped_connection(server: ReplayServer) -> None:
    cut = STOP.body().replace(b"data: [DONE]\n\n", b"")
    server.push(Body(cut))
    with pytest.raises(ProviderError) as caught:
        result_of(provider(server, max_tokens=8))
    assert caught.value.kind == "connection" and caught.value.retryable


def test_a_server_finish_reason_is_never_marked_inferred(server: ReplayServer) -> None:
    llama = recording("llama_cpp/smollm2-forced-tool-call")
    server.push(Body(llama.body()))
    result = result_of(provider(server, max_tokens=64))
    assert result.stop_reason == "tool_use" and not result.stop_reason_inferred


def test_the_event_log_says_the_stop_reason_was_inferred(server: ReplayServer) -> None:
    server.push(Body(MAX_TOKENS.body()))
    log = EventLog(":memory:")
    agent = AgentHarness(provider(server, max_tokens=8), tools=AgentToolRegistry([]), event_log=log, stream=True,
                         reflect_on_tool_error=False, reflect_on_uncertainty=False)
    result = agent.run_turn("s", [], "Hi")
    assert result.status == "completed", result.error
    ends = [e for e in log.events(session_id="s") if e.type == "step_end"]
    assert [(e.stop_reason, e.stop_reason_inferred) for e in ends] == [("max_tokens", True)]  # type: ignore[attr-defined]


def test_the_decoder_notes_done_only_when_it_came() -> None:
    from openai._streaming import SSEDecoder

    with_done = DoneWatchingDecoder(SSEDecoder())
    assert [e.data for e in with_done.iter_bytes(iter([b': ping\n\ndata: {"a":1}\n\nda', b"ta: [DONE]\n\n"]))] == [
        '{"a":1}', "[DONE]"]
    assert with_done.saw_done
    without = DoneWatchingDecoder(SSEDecoder())
    assert [e.data for e in without.iter_bytes(iter([b'data: {"a":1}\n\n']))] == ['{"a":1}']
    assert not without.saw_done


@pytest.mark.parametrize(("tokens", "bound", "finish"), [(8, 8, "length"), (9, 8, "length"), (7, 8, "stop"),
                                                         (8, None, "stop"), (0, 0, "stop")])
def test_inferred_finish(tokens: int, bound: int | None, finish: str) -> None:
    assert inferred_finish(tokens, bound) == finish


def test_an_unstreamed_call_asks_for_a_stream_so_tinyq4s_sse_answer_is_what_it_reads(server: ReplayServer) -> None:
    # tinyq4 answers text/event-stream even to "stream": false; the provider never sends
    # that: generate() (no streaming wanted) collects the same stream
    server.push(Body(STOP.body()))
    result = provider(server, max_tokens=8).generate(HI, [], timeout_s=30)
    assert (result.text, result.stop_reason, result.stop_reason_inferred) == ("The answer", "end_turn", True)
    assert server.bodies("/chat/completions")[0]["stream"] is True
