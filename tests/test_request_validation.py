"""The request validator of the mock servers (``request_validation.py``, issue #23).

A body the SDKs' request types describe passes; a wrong-typed, unknown or missing field
is a problem naming its path; the mock servers answer such a body with a 400 naming it,
as the real API would, and fail the test when they stop.
"""

from __future__ import annotations

import copy
from typing import Any

import anthropic
import openai
import pytest
from mock_servers import InvalidRequestError, MockAnthropic, MockOpenAI, Reply
from request_validation import Problem, problems, request_problems, request_types, unreadable_annotations

from jupyter_brain.providers.anthropic import AnthropicProvider
from jupyter_brain.providers.base import ProviderError
from jupyter_brain.providers.openai_compat import OpenAICompatProvider

PNG = {"media_type": "image/png", "data": "iVBORw0KGgo="}
HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a notebook assistant."},
    {"role": "user", "content": "Plot the data."},
    {"role": "assistant", "content": "Plotting.",
     "thinking": [{"text": "A plot.", "signature": "sig"}, {"redacted": True, "data": "xyz"}],
     "tool_calls": [{"id": "call.1", "name": "run_cell", "arguments": {"code": "plot()"}}]},
    {"role": "tool", "tool_call_id": "call.1", "name": "run_cell", "content": "done", "images": [PNG]},
    {"role": "tool", "tool_call_id": "call.2", "name": "run_cell", "content": "boom", "is_error": True},
    {"role": "assistant", "content": "Here it is."},
    {"role": "user", "content": "Thanks"},
]
TOOLS: list[dict[str, Any]] = [
    {"name": "run_cell", "description": "Run code",
     "input_schema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}},
]


def paths(found: list[Problem]) -> list[str]:
    return [p.path for p in found]


def anthropic_body(thinking_budget: int = 2000) -> dict[str, Any]:
    provider = AnthropicProvider(api_key="k", thinking_display="summarized")
    tools = [*TOOLS, provider.web_search_tool()]
    return {**provider.request_params(HISTORY, tools, thinking_budget), "stream": True}


def openai_body(echo: str = "off") -> dict[str, Any]:
    provider = OpenAICompatProvider("gpt-4o", api_key="k", max_tokens=100)
    provider.reasoning_echo = echo  # type: ignore[assignment]
    return provider.request_params(HISTORY, TOOLS)


# -- the validator ---------------------------------------------------------------------------


def test_the_providers_bodies_are_valid() -> None:
    body = anthropic_body()
    assert request_problems("/v1/messages", body)[0] == []
    assert request_problems("/v1/messages", {**body, "stream": False})[0] == []
    count = {k: v for k, v in body.items() if k not in ("max_tokens", "stream")}
    assert request_problems("/v1/messages/count_tokens", count)[0] == []
    assert request_problems("/v1/chat/completions", openai_body())[0] == []


def test_it_names_the_type_it_checked_against() -> None:
    _, against = request_problems("/v1/messages", anthropic_body())
    assert against.endswith("message_create_params.MessageCreateParamsStreaming)")
    _, against = request_problems("/v1/chat/completions", {**openai_body(), "stream": False})
    assert against.endswith("completion_create_params.CompletionCreateParamsNonStreaming)")
    assert request_problems("/v1/unknown", {"anything": 1}) == ([], "")


def test_a_missing_required_field_is_named_by_its_path() -> None:
    body = anthropic_body()
    result = body["messages"][2]["content"][0]
    assert result["type"] == "tool_result"
    del result["tool_use_id"]
    (problem,) = request_problems("/v1/messages", body)[0]
    assert problem.path == "messages[2].content[0].tool_use_id"
    assert "required field missing" in problem.message
    assert str(problem).startswith("messages[2].content[0].tool_use_id: required field missing")


def test_a_wrong_type_is_named_by_its_path() -> None:
    body = anthropic_body()
    body["max_tokens"] = "8192"
    body["messages"][2]["content"][1]["is_error"] = 1  # a number is not a boolean
    body["messages"][1]["content"][0]["signature"] = None
    found = request_problems("/v1/messages", body)[0]
    assert sorted(paths(found)) == ["max_tokens", "messages[1].content[0].signature",
                                    "messages[2].content[1].is_error"]
    assert {str(p) for p in found} >= {"max_tokens: expected integer, got string",
                                       "messages[2].content[1].is_error: expected boolean, got number"}


def test_json_types_are_strict() -> None:
    body = openai_body()
    assert paths(request_problems("/v1/chat/completions", {**body, "max_tokens": True})[0]) == ["max_tokens"]
    assert paths(request_problems("/v1/chat/completions", {**body, "max_tokens": 1.5})[0]) == ["max_tokens"]
    assert request_problems("/v1/chat/completions", {**body, "temperature": 1})[0] == []  # an int is a number
    assert paths(request_problems("/v1/chat/completions", {**body, "temperature": "1"})[0]) == ["temperature"]


def test_unknown_fields_are_refused_at_every_depth() -> None:
    body = anthropic_body()
    body["colour"] = "blue"
    body["messages"][1]["content"][-1]["colour"] = "blue"
    body["tools"][0]["input_schema"]["colour"] = "blue"  # a JSON schema (a Dict[str, object]) takes any key
    found = request_problems("/v1/messages", body)[0]
    assert sorted(map(str, found)) == [
        "colour: unexpected field (MessageCreateParamsStreaming has no 'colour')",
        "messages[1].content[3].colour: unexpected field (ToolUseBlockParam has no 'colour')",
    ]


def test_a_block_is_checked_as_the_type_it_names() -> None:
    body = anthropic_body()
    body["messages"][1]["content"][2]["type"] = "txt"
    (problem,) = request_problems("/v1/messages", body)[0]
    assert problem.path == "messages[1].content[2].type"
    assert "'text'" in problem.message and "'tool_use'" in problem.message and "got 'txt'" in problem.message
    body = anthropic_body()
    del body["messages"][1]["content"][2]["text"]  # a text block without text: text's problem, no other
    assert [str(p) for p in request_problems("/v1/messages", body)[0]] == [
        "messages[1].content[2].text: required field missing (TextBlockParam)"
    ]


def test_a_value_of_a_kind_no_member_takes() -> None:
    body = anthropic_body()
    body["messages"][2]["content"] = 7
    assert [str(p) for p in request_problems("/v1/messages", body)[0]] == [
        "messages[2].content: expected string | array, got 7"
    ]


def test_openai_messages_are_told_apart_by_role() -> None:
    body = openai_body()
    body["messages"][3]["role"] = "function_result"
    (problem,) = request_problems("/v1/chat/completions", body)[0]
    assert problem.path == "messages[3].role" and "'tool'" in problem.message
    body = openai_body()
    del body["messages"][3]["tool_call_id"]
    assert paths(request_problems("/v1/chat/completions", body)[0]) == ["messages[3].tool_call_id"]


def test_reasoning_content_is_deepseeks_alone() -> None:
    body = openai_body(echo="tool_calls")
    assert "reasoning_content" in body["messages"][2]
    (problem,) = request_problems("/v1/chat/completions", body)[0]
    assert problem.path == "messages[2].reasoning_content" and "unexpected field" in problem.message
    assert request_problems("/v1/chat/completions", body, "deepseek")[0] == []
    body["messages"][2]["reasoning_content"] = None  # the extension has a type, too
    assert paths(request_problems("/v1/chat/completions", body, "deepseek")[0]) == ["messages[2].reasoning_content"]
    body["messages"][1]["reasoning_content"] = "x"  # only on assistant messages
    assert "messages[1].reasoning_content" in paths(request_problems("/v1/chat/completions", body, "deepseek")[0])
    with pytest.raises(ValueError, match="unknown dialect"):
        request_problems("/v1/chat/completions", body, "llama-something")


def test_every_annotation_of_the_sdk_request_types_is_readable() -> None:
    types = request_types()
    assert [t.__name__ for t in types] == [
        "MessageCreateParamsStreaming", "MessageCreateParamsNonStreaming", "MessageCountTokensParams",
        "CompletionCreateParamsStreaming", "CompletionCreateParamsNonStreaming",
    ]
    assert [bad for t in types for bad in unreadable_annotations(t)] == []


def test_problems_of_a_plain_annotation() -> None:
    assert problems({"a": [1, 2]}, dict[str, list[int]]) == []
    assert [str(p) for p in problems({"a": [1, "2"]}, dict[str, list[int]])] == ["a[1]: expected integer, got string"]


# -- the mock servers ------------------------------------------------------------------------


def test_the_mock_answers_an_invalid_body_with_a_400_naming_the_field() -> None:
    with pytest.raises(InvalidRequestError) as failed:
        with MockAnthropic() as server:
            server.push(Reply(text="never sent"))
            client = anthropic.Anthropic(api_key="k", base_url=server.url, max_retries=0)
            messages: Any = [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]
            with pytest.raises(anthropic.BadRequestError) as refused:
                client.messages.create(model="m", max_tokens=10, messages=messages)
            assert "messages[0].content[0].tool_use_id: required field missing" in str(refused.value)
            assert len(server.script) == 1  # the reply stays for a valid request
            (invalid,) = server.invalid_requests
            assert paths(invalid.problems) == ["messages[0].content[0].tool_use_id"]
    text = str(failed.value)
    assert "POST /v1/messages" in text and "messages[0].content[0].tool_use_id" in text
    assert "MessageCreateParamsNonStreaming" in text


def test_a_provider_sees_the_400_as_a_provider_error_naming_the_field() -> None:
    bad_tools: Any = [{"name": "f", "description": None, "input_schema": {"type": "object"}}]
    with pytest.raises(InvalidRequestError, match=r"tools\[0\]\.description: expected string, got null"):
        with MockAnthropic() as server:
            provider = AnthropicProvider(api_key="k", base_url=server.url, max_retries=0)
            with pytest.raises(ProviderError) as info:
                list(provider.generate_stream([{"role": "user", "content": "hi"}], bad_tools))
            assert info.value.status_code == 400 and "tools[0].description" in info.value.message


def test_an_error_in_the_block_keeps_its_error_and_gets_the_invalid_requests_as_a_note() -> None:
    with pytest.raises(RuntimeError) as failed:
        with MockOpenAI() as server:
            client = openai.OpenAI(api_key="k", base_url=server.url + "/v1", max_retries=0)
            with pytest.raises(openai.BadRequestError):
                client.chat.completions.create(model="m", messages=[{"role": "user", "content": 3}])  # type: ignore[misc,list-item]
            raise RuntimeError("the test's own failure")
    assert any("messages[0].content" in note for note in failed.value.__notes__)


def test_stop_fails_too_as_fixtures_and_rigs_call_it() -> None:
    server = MockOpenAI().start()
    client = openai.OpenAI(api_key="k", base_url=server.url + "/v1", max_retries=0)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="m", messages=[], extra_body={"colour": "blue"})
    with pytest.raises(InvalidRequestError, match="colour: unexpected field"):
        server.stop()


def test_a_dialect_takes_its_own_fields() -> None:
    body = openai_body(echo="tool_calls")
    body["stream"] = False
    with MockOpenAI(dialect="deepseek") as server:
        server.push(Reply(text="ok"))
        client = openai.OpenAI(api_key="k", base_url=server.url + "/v1", max_retries=0)
        assert client.chat.completions.create(**body).choices[0].message.content == "ok"
        assert server.bodies()[0]["messages"][2]["reasoning_content"] == "A plot."
        with pytest.raises(ValueError, match="unknown dialect 'ollama'"):
            server.dialect = "ollama"


def test_expect_invalid_lets_that_field_through_and_must_be_met() -> None:
    body = openai_body(echo="tool_calls")
    body["stream"] = False
    with MockOpenAI() as server:
        server.expect_invalid("messages[2].reasoning_content", "a strict server's answer is scripted")
        server.push(Reply(text="answered from the script"))
        client = openai.OpenAI(api_key="k", base_url=server.url + "/v1", max_retries=0)
        assert client.chat.completions.create(**body).choices[0].message.content == "answered from the script"
        assert server.invalid_requests == []
    with pytest.raises(InvalidRequestError, match=r"expect_invalid\('messages\[2\]\.reasoning_content'\)"):
        with MockOpenAI() as server:
            server.expect_invalid("messages[2].reasoning_content", "never comes")
    with pytest.raises(InvalidRequestError, match="colour"):  # other fields still fail
        with MockOpenAI() as server:
            server.expect_invalid("messages[2].reasoning_content", "scripted")
            client = openai.OpenAI(api_key="k", base_url=server.url + "/v1", max_retries=0)
            with pytest.raises(openai.BadRequestError):
                client.chat.completions.create(**copy.deepcopy(body), extra_body={"colour": "blue"})
