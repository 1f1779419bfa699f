"""A keyless local server is asked what it serves once per base URL (providers/served_models.py),
asked again when that may have changed; and a streamed call keeps its connection
(``stream_end._drain``)."""

from __future__ import annotations

from mock_servers import HttpError, MockOpenAI, Reply

from jupyter_brain.providers.openai_compat import OpenAICompatProvider

ASK = [{"role": "user", "content": "hi"}]



def answer(provider: OpenAICompatProvider) -> str:
    done = [e for e in provider.generate_stream(ASK, []) if e.type == "done"]  # type: ignore[arg-type]
    assert done[0].result is not None
    return done[0].result.text


def models_requests(server: MockOpenAI) -> int:
    return [r.path for r in server.requests].count("/v1/models")


def test_the_models_list_is_asked_once_per_server_and_a_stream_keeps_its_connection():
    with MockOpenAI(models=["local-model"]) as server:
        server.push(Reply(text="one"), Reply(text="two"), Reply(text="three"))
        first = OpenAICompatProvider(base_url=server.url + "/v1")
        assert answer(first) == "one" and answer(first) == "two"
        second = OpenAICompatProvider(base_url=server.url + "/v1")  # a new provider, same server
        assert answer(second) == "three" and second.model == "local-model"
        assert models_requests(server) == 1
        assert [b["model"] for b in server.bodies("/chat/completions")] == ["local-model"] * 3
        assert len(set(server.peers[:3])) == 1, server.peers  # GET + two streams on one connection


def test_a_model_the_server_no_longer_serves_is_looked_up_again():
    with MockOpenAI(models=["old-model"]) as server:
        server.push(Reply(text="from old"))
        provider = OpenAICompatProvider(base_url=server.url + "/v1")
        assert answer(provider) == "from old"
        server.models = ["new-model"]  # the server restarted with another model
        server.push(HttpError(404, "model 'old-model' not found", "model_not_found"), Reply(text="from new"))
        assert answer(provider) == "from new"
        assert provider.model == "new-model" and models_requests(server) == 2
        assert [b["model"] for b in server.bodies("/chat/completions")] == ["old-model", "old-model", "new-model"]
