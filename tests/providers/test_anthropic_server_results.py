"""A server tool's result read for the timeline, for each result shape the API sends.

The blocks are vercel/ai's recorded answers (packages/anthropic/src/__fixtures__ at
ed857f50f112e23930b0c2dd8d532cc8bebbc911, Apache-2.0), long fields shortened.
"""

from __future__ import annotations

from jupyter_brain.providers.anthropic_server_results import MAX_LINES, read_result
from jupyter_brain.providers.anthropic_stream import result_from_message


def test_a_tool_search_names_the_tools_it_loaded() -> None:
    found = {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {
        "type": "tool_search_tool_search_result", "tool_references": [
            {"type": "tool_reference", "tool_name": "readNoteTree"},
            {"type": "tool_reference", "tool_name": "executeEditorOperation"}]}}
    assert read_result(found).summary == "found 2 tools: readNoteTree, executeEditorOperation"
    none = {**found, "content": {"type": "tool_search_tool_search_result", "tool_references": []}}
    assert read_result(none).summary == "found no tools" and read_result(none).error is None


def test_a_program_shows_its_return_code_and_output_cut_to_a_few_lines() -> None:  # anthropic-code-execution-20250825.1
    stdout = "The 10th Fibonacci number is: 34\n\n" + "".join(f"F({i}) = {i}\n" for i in range(1, 40))
    block = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_2", "content": {
        "type": "bash_code_execution_result", "stdout": stdout, "stderr": "warning: x", "return_code": 0, "content": []}}
    summary = read_result(block).summary.splitlines()
    assert summary[:2] == ["return code 0", "The 10th Fibonacci number is: 34"]
    assert summary[-2:] == ["…", "stderr: warning: x"] and len(summary) == 1 + MAX_LINES + 2


def test_errors_are_errors_whatever_the_tool() -> None:  # anthropic-web-fetch-tool.error.json
    message = {"content": [
        {"type": "server_tool_use", "id": "srvtoolu_013gia34XNKyTfwHxaPCKEVd", "name": "web_fetch",
         "input": {"url": "https://raw.githubusercontent.com/vercel/ai/blob/main/examples/ai-functions/data/ai.pdf"}},
        {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_013gia34XNKyTfwHxaPCKEVd",
         "content": {"type": "web_fetch_tool_result_error", "error_code": "unavailable"}},
        {"type": "text", "text": "I'm unable to access the PDF document at that URL."}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 1902, "output_tokens": 120}}
    [use] = result_from_message(message).server_tools
    assert (use.name, use.error, use.summary) == ("web_fetch", "unavailable", "")


def test_other_shapes_are_read_or_named_never_raised() -> None:
    fetched = {"type": "web_fetch_tool_result", "tool_use_id": "s", "content": {
        "type": "web_fetch_result", "url": "https://example.com",
        "content": {"type": "document", "title": "Example Domain", "source": {"type": "text", "data": "..."}}}}
    assert read_result(fetched).summary == "fetched https://example.com (Example Domain)"
    created = {"type": "text_editor_code_execution_tool_result", "tool_use_id": "s",
               "content": {"type": "text_editor_code_execution_create_result", "is_file_update": False}}
    assert read_result(created).summary == "create"
    mcp = {"type": "mcp_tool_result", "tool_use_id": "m", "is_error": False,
           "content": [{"type": "text", "text": "Tool echo: hello world"}]}
    assert read_result(mcp).summary == "Tool echo: hello world"
    assert read_result({**mcp, "is_error": True}).error == "Tool echo: hello world"
    advice = {"type": "advisor_tool_result", "tool_use_id": "a",
              "content": {"type": "advisor_result", "text": "Partial plaintext advice.", "stop_reason": "max_tokens"}}
    assert read_result(advice).summary == "advisor\nPartial plaintext advice."
    assert read_result({"type": "new_tool_result", "content": {"type": "new_thing"}}).summary == "new_thing"
    assert read_result({"type": "new_tool_result"}).summary == ""


def test_the_mcp_connectors_call_is_a_server_call_with_its_result() -> None:  # anthropic-mcp.1
    message = {"content": [
        {"type": "mcp_tool_use", "id": "mcptoolu_017CuqaJcXe5ZHJjaz3KS1AT", "name": "echo",
         "input": {"message": "hello world"}, "server_name": "echo"},
        {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_017CuqaJcXe5ZHJjaz3KS1AT", "is_error": False,
         "content": [{"type": "text", "text": "Tool echo: hello world"}]},
        {"type": "text", "text": "The echo tool said hello world."}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5}}
    result = result_from_message(message)
    [use] = result.server_tools
    assert (use.name, use.input, use.summary) == ("echo", {"message": "hello world"}, "Tool echo: hello world")
    assert result.tool_calls == []  # the connector ran it: nothing for us to run
    assert [b["type"] for b in result.native_content["blocks"]] == ["mcp_tool_use", "mcp_tool_result", "text"]
