"""Per-server behaviours of the OpenAI-compatible provider (items 1 and 2 of issue 12).

- ``auto`` with only a base URL asks the server which model it serves; a model the server
  does not serve is an error that lists the ones it does (asked only after the 404).
- DeepSeek's thinking mode needs ``reasoning_content`` back on tool-call turns, other
  servers reject the field: chosen from the base URL, learned from a 400, overridable.

The model answers are recorded real streams (``replay.py``); the 400/404 bodies use the
servers' own error messages.
"""

from __future__ import annotations

import pytest
from mock_servers import HttpError

from jupyter_brain.providers.base import ProviderError, ProviderResult
from jupyter_brain.providers.openai_compat import OpenAICompatProvider
from jupyter_brain.providers.openai_server import is_model_not_found, learn_reasoning_echo
from jupyter_brain.providers.registry import get_provider
from tests.providers.replay import Body, ReplayServer, recording

QUESTION = {"role": "user", "content": "What's the weather in San Francisco?"}
DEEPSEEK_MISSING = (
    "Missing `reasoning_content` field in the assistant message at message index 2. For more "
    "information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
)
DEEPSEEK_V4 = "The reasoning_content in the thinking mode must be passed back to the API."
STRICT_SERVER = "Additional properties are not allowed ('reasoning_content' was unexpected) - 'messages.2'"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def run(provider: OpenAICompatProvider, messages: list[dict]) -> ProviderResult:
    events = list(provider.generate_stream(messages, [], timeout_s=30))
    assert events[-1].type == "done" and events[-1].result is not None
    return events[-1].result


def assistants(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


# -- model discovery (item 1) -------------------------------------------------------------


def test_auto_with_only_a_base_url_uses_the_model_the_server_serves(monkeypatch) -> None:
    with ReplayServer(models=["qwen2.5-coder:7b-instruct-q8_0", "llama3.2"]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        provider = get_provider("auto")
        assert isinstance(provider, OpenAICompatProvider) and provider.model == ""
        server.push(Body(recording("ollama/ask-openai-parallel-tool-calls").body()))
        result = run(provider, [QUESTION])
        assert [r.path for r in server.requests] == ["/v1/models", "/v1/chat/completions"]
        assert server.bodies("/chat/completions")[0]["model"] == "qwen2.5-coder:7b-instruct-q8_0"
        assert provider.model == "qwen2.5-coder:7b-instruct-q8_0"
        assert [c.arguments for c in result.tool_calls] == [{"command": "ls"}, {"command": "ls -l"}]


@pytest.mark.parametrize("var", ["OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"])
def test_a_base_url_without_a_key_never_defaults_to_an_openai_model(monkeypatch, var: str) -> None:
    monkeypatch.setenv(var, "http://127.0.0.1:9/v1")
    assert get_provider("auto").model == ""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv(var)
    assert get_provider("auto").model == "gpt-5.4"  # OpenAI itself keeps its default


@pytest.mark.parametrize(
    "message",
    [
        'model "gpt-5.4" not found, try pulling it first',  # Ollama
        "The model `gpt-5.4` does not exist.",  # vLLM
        "The model `gpt-5.4` does not exist or you do not have access to it.",  # OpenAI
    ],
)
def test_an_unserved_model_lists_the_served_ones(message: str) -> None:
    with ReplayServer(models=["qwen3:8b", "llama3.2"]) as server:
        server.push(HttpError(404, message, "not_found_error"))
        provider = OpenAICompatProvider("gpt-5.4", api_key="k", base_url=server.url + "/v1", max_retries=0)
        with pytest.raises(ProviderError) as info:
            run(provider, [QUESTION])
        text = info.value.message
        assert "'gpt-5.4'" in text and "qwen3:8b, llama3.2" in text and message in text
        assert info.value.status_code == 404 and info.value.kind == "bad_request"
        assert [(r.method, r.path) for r in server.requests] == [
            ("POST", "/v1/chat/completions"), ("GET", "/v1/models"),
        ]


def test_a_404_for_a_served_model_is_reported_as_the_server_said() -> None:
    with ReplayServer(models=["qwen3:8b"]) as server:
        server.push(HttpError(404, "404 page not found"))
        provider = OpenAICompatProvider("qwen3:8b", api_key="k", base_url=server.url + "/v1", max_retries=0)
        with pytest.raises(ProviderError) as info:
            run(provider, [QUESTION])
        assert info.value.message == "404 page not found"


def test_a_named_model_costs_no_models_request() -> None:
    with ReplayServer(models=["never-asked"]) as server:
        server.push(Body(recording("mistral/vercel-mistral-text").body()))
        provider = OpenAICompatProvider("mistral-small-latest", api_key="k", base_url=server.url + "/v1")
        assert run(provider, [QUESTION]).text == "Hello, world! This is a test response."
        assert [r.path for r in server.requests] == ["/v1/chat/completions"]


def test_model_not_found_detection() -> None:
    def err(status: int, message: str) -> ProviderError:
        return ProviderError(message, kind="bad_request", status_code=status)

    assert is_model_not_found(err(404, "anything"))
    assert is_model_not_found(err(400, "model 'x' not found"))
    assert is_model_not_found(err(400, "The model `x` does not exist"))
    assert not is_model_not_found(err(400, "messages: field required"))
    assert not is_model_not_found(err(500, "model crashed"))


# -- reasoning_content (item 2) -----------------------------------------------------------


def tool_turn_history(provider: OpenAICompatProvider, server: ReplayServer) -> tuple[list[dict], str]:
    """Step 1: the recorded DeepSeek answer (reasoning, then a tool call) and its result."""
    server.push(Body(recording("deepseek/vercel-deepseek-tool-call").body()))
    first = run(provider, [QUESTION])
    (call,) = first.tool_calls
    history = [QUESTION, first.to_message(),
               {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": "18 °C, fog"}]
    return history, first.thinking[0].text


def test_deepseek_base_url_sends_reasoning_back_on_tool_call_turns() -> None:
    provider = OpenAICompatProvider("deepseek-reasoner", api_key="k", base_url="https://api.deepseek.com")
    assert provider.reasoning_echo == "tool_calls"
    history = [
        QUESTION,
        {"role": "assistant", "content": "", "thinking": [{"text": "I need the weather tool."}],
         "tool_calls": [{"id": "call_1", "name": "weather", "arguments": {"location": "SF"}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "weather", "content": "18 °C"},
        {"role": "assistant", "content": "It is 18 °C.", "thinking": [{"text": "Report it."}]},
        {"role": "user", "content": "And tomorrow?"},
    ]
    tool_turn, answer_turn = assistants(provider.request_params(history, []))
    assert tool_turn["reasoning_content"] == "I need the weather tool."
    assert "reasoning_content" not in answer_turn


@pytest.mark.parametrize(
    ("base_url", "override", "sent"),
    [
        ("http://localhost:8000/v1", None, False),
        ("http://localhost:8000/v1", True, True),
        ("https://api.deepseek.com/v1", False, False),
    ],
)
def test_reasoning_echo_from_url_and_override(base_url: str, override: bool | None, sent: bool) -> None:
    provider = OpenAICompatProvider("m", api_key="k", base_url=base_url, send_reasoning_content=override)
    history = [QUESTION, {"role": "assistant", "content": "", "thinking": [{"text": "t"}],
                          "tool_calls": [{"id": "c", "name": "weather", "arguments": {}}]}]
    assert ("reasoning_content" in assistants(provider.request_params(history, []))[0]) is sent


def test_a_400_asking_for_reasoning_content_turns_it_on_and_retries() -> None:
    with ReplayServer() as server:
        server.dialect = "deepseek"  # DeepSeek takes reasoning_content back (request_validation.DIALECTS)
        provider = OpenAICompatProvider("deepseek-reasoner", api_key="k", base_url=server.url + "/v1", max_retries=0)
        assert provider.reasoning_echo == "off"
        history, reasoning = tool_turn_history(provider, server)
        server.push(HttpError(400, DEEPSEEK_MISSING), Body(recording("deepseek/vercel-deepseek-reasoning").body()))
        second = run(provider, history)
        assert second.text == 'The word "strawberry" contains three "r"s.'
        rejected, accepted = server.bodies("/chat/completions")[1:]
        assert "reasoning_content" not in assistants(rejected)[0]
        assert assistants(accepted)[0]["reasoning_content"] == reasoning
        assert provider.reasoning_echo == "tool_calls"
        server.push(Body(recording("deepseek/vercel-deepseek-reasoning").body()))
        run(provider, history)  # learned: the next request is right the first time
        assert "reasoning_content" in assistants(server.bodies("/chat/completions")[-1])[0]
        assert len(server.requests) == 4


def test_a_400_rejecting_reasoning_content_turns_it_off_and_retries() -> None:
    with ReplayServer() as server:
        provider = OpenAICompatProvider("m", api_key="k", base_url=server.url + "/v1", max_retries=0)
        history, _ = tool_turn_history(provider, server)
        provider.reasoning_echo = "tool_calls"  # as if chosen from the URL
        server.expect_invalid("messages[1].reasoning_content", "a strict server refuses it: its 400 is scripted")
        server.push(HttpError(400, STRICT_SERVER), Body(recording("llama_cpp/fantasy-gpt-oss-after-tool-result").body()))
        assert run(provider, history).text.startswith("The current weather in Florence, Italy is")
        rejected, accepted = server.bodies("/chat/completions")[1:]
        assert "reasoning_content" in assistants(rejected)[0]
        assert "reasoning_content" not in assistants(accepted)[0]
        assert provider.reasoning_echo == "off"


def test_an_override_is_never_relearned() -> None:
    with ReplayServer() as server:
        provider = OpenAICompatProvider("m", api_key="k", base_url=server.url + "/v1", max_retries=0,
                                        send_reasoning_content=False)
        history, _ = tool_turn_history(provider, server)
        server.push(HttpError(400, DEEPSEEK_MISSING))
        with pytest.raises(ProviderError) as info:
            run(provider, history)
        assert info.value.status_code == 400 and "reasoning_content" in info.value.message
        assert len(server.requests) == 2 and provider.reasoning_echo == "off"


def test_learning_from_the_servers_words() -> None:
    def err(message: str, status: int = 400) -> ProviderError:
        return ProviderError(message, kind="bad_request", status_code=status)

    assert learn_reasoning_echo("off", err(DEEPSEEK_MISSING)) == "tool_calls"
    assert learn_reasoning_echo("off", err(DEEPSEEK_V4)) == "tool_calls"
    assert learn_reasoning_echo("tool_calls", err(DEEPSEEK_V4)) == "all"  # wants it on every turn
    assert learn_reasoning_echo("all", err(DEEPSEEK_V4)) is None  # nothing left to try
    assert learn_reasoning_echo("tool_calls", err(STRICT_SERVER)) == "off"
    assert learn_reasoning_echo("off", err(STRICT_SERVER)) is None
    assert learn_reasoning_echo("off", err("messages: field required")) is None
    assert learn_reasoning_echo("off", err(DEEPSEEK_MISSING, status=500)) is None
