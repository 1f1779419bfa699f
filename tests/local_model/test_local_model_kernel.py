"""%%agent cells in a real kernel against a real model: llama-cpp-python serving SmolLM2-135M.

The model is tiny; these tests are about the protocol and robustness (streaming, usage,
Ctrl-C, history, tools), never about the quality of the answers. Each test prints what the
model said (``pytest -s`` shows it). No API key is set anywhere: OPENAI_BASE_URL alone.

Every cell names one of the kernel's bounded providers (conftest.KERNEL_PROVIDERS), so no
answer runs for the model's whole window; a check that needs an answer of some length uses
``_steady``, whose answers cannot end before their bound, rather than hoping for one.
"""

from __future__ import annotations

import json

import pytest

from .server import ANSWER_TOKENS, LONG_ANSWER_TOKENS

# A real model on a shared machine: cells can take minutes when other work is running.
# The timeout only stops a hang; nothing here asserts how long anything took.
pytestmark = [pytest.mark.local_model, pytest.mark.kernel, pytest.mark.timeout(900)]

HISTORY_PROBLEMS = (
    "__import__('jupyter_brain.agent.history', fromlist=['x'])"
    ".history_problems(_agent.messages, require_final_assistant=True)"
)


BOUNDED_PROVIDERS = ("_local", "_auto", "_steady", "_long")  # conftest.KERNEL_PROVIDERS
TURN_TIMEOUT_S = 900  # the turn's own time limit: a loaded machine must not end a turn early


def agent_cell(prompt: str, *flags: str, provider: str = "_local") -> str:
    """An %%agent cell through one of the kernel's bounded providers (or ``forced``)."""
    assert provider in (*BOUNDED_PROVIDERS, "forced"), f"{provider!r} is not a bounded provider"
    return f"%%agent --provider {provider} --timeout {TURN_TIMEOUT_S} {' '.join(flags)}\n{prompt}"


def said(label: str, text: str, seconds: float) -> None:
    print(f"\n[model said | {label} | {seconds:.1f}s] {text!r}")


def turn(kernel) -> dict:
    return kernel.value(
        "{'turn_id': _agent.turn_id, 'status': _agent.status, 'text': _agent.text, 'error': _agent.error,"
        " 'input_tokens': _agent.input_tokens, 'output_tokens': _agent.output_tokens,"
        " 'n_messages': len(_agent.messages)}"
    )


def estimated_marks(value, path: str) -> list[str]:
    """Paths of every true field whose name says "estimated" in a JSON-like value."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if "estimated" in str(key) and item is True:
                found.append(f"{path}.{key}")
            found += estimated_marks(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += estimated_marks(item, f"{path}[{index}]")
    return found


def sse_chunks(body: str) -> list[dict]:
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: {")]


def test_streamed_text_arrives_in_pieces_and_the_view_shows_it(local_model, recording_proxy, agent_kernel):
    kernel = agent_kernel()
    run = kernel.run(agent_cell("In one sentence: what is a Jupyter notebook?", provider="_steady")).check()
    result = turn(kernel)
    said("streamed text", result["text"], run.seconds)

    assert result["status"] == "completed", result
    assert result["text"].strip()
    deltas = [e["text"] for e in run.events if e.get("type") == "text_delta"]
    assert len(deltas) >= 2, f"the view got {len(deltas)} text deltas: not streamed"
    assert "".join(deltas).strip() == result["text"].strip()
    # The server really streamed: several SSE content chunks, then a finish_reason and [DONE].
    (exchange,) = list(recording_proxy.chat_requests())
    assert exchange.request_json()["max_tokens"] == ANSWER_TOKENS
    chunks = sse_chunks(exchange.response_text())
    contents = sum(1 for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content"))
    assert 2 <= contents <= ANSWER_TOKENS, contents
    # The answer could not stop early: the bound ended it, so the server honoured max_tokens.
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    assert exchange.response_text().rstrip().endswith("data: [DONE]")
    # The view: the widget, then the finished turn's bundle with the Markdown transcript.
    final = run.displays()[-1]
    assert "application/vnd.jupyter-brain.turn+json" in final
    assert "status='completed'" in final["text/plain"]
    assert result["text"].strip()[:20] in final.get("text/markdown", ""), final.get("text/markdown")


def test_usage_is_counted_and_marked_estimated_when_the_server_reports_none(
    local_model, recording_proxy, agent_kernel
):
    kernel = agent_kernel()
    run = kernel.run(agent_cell("Name three colours.", provider="_steady")).check()
    result = turn(kernel)
    said("usage", result["text"], run.seconds)
    (exchange,) = list(recording_proxy.chat_requests())
    assert exchange.request_json()["stream_options"] == {"include_usage": True}
    reported = [c.get("usage") for c in sse_chunks(exchange.response_text()) if c.get("usage")]
    print(f"[usage] server reported: {reported or 'nothing'}; turn counted "
          f"input={result['input_tokens']} output={result['output_tokens']}")

    assert result["status"] == "completed", result
    assert result["input_tokens"] > 0 and result["output_tokens"] > 0, (
        f"0 tokens shown although the model read a prompt and answered (server usage: {reported})"
    )
    cost = kernel.run("%agent cost").check()
    print(f"[usage] %agent cost:\n{cost.stdout}{''.join(str(d.get('text/plain', '')) for d in cost.displays())}")
    if not reported:
        # llama-cpp-python sends no usage chunk: the figures are counted locally and say so,
        # on the TurnResult, its steps, the events the view shows and in %agent cost.
        record = kernel.value("_agent.model_dump(mode='json', exclude={'messages', 'new_messages'})")
        marks = estimated_marks(record, "_agent") + estimated_marks(run.events, "events")
        print(f"[usage] marked estimated at: {marks}")
        assert record["usage_estimated"] is True, "the server reported no usage, yet the figure is not marked estimated"
        assert all(step["usage_estimated"] for step in record["steps"]), record["steps"]
        assert any(mark.startswith("events") for mark in marks), "the view is not told the usage is estimated"
        assert "estimated" in cost.stdout, cost.stdout


HELD_AFTER = 4  # at most this many content chunks of the interrupted answer reach the kernel


def test_ctrl_c_mid_stream_ends_the_cell_and_the_next_cell_works(local_model, recording_proxy, agent_kernel):
    kernel = agent_kernel()
    # The answer cannot end before LONG_ANSWER_TOKENS, and after HELD_AFTER content chunks
    # the proxy forwards nothing more until the kernel hangs up: however the model answers
    # and however slow the machine, the stream is open when the interrupt comes.
    recording_proxy.hold_next_stream(after_content_chunks=HELD_AFTER)
    run = kernel.run_and_interrupt(
        agent_cell("Count from 1 to 3000, one number per line, and nothing else.", "--max-steps 1",
                   provider="_long"),
        when="text_delta", count=1,  # the view has shown streamed text: the stream is under way
    )
    streamed = "".join(e["text"] for e in run.events if e.get("type") == "text_delta")
    said("before Ctrl-C", streamed, run.seconds)
    (cut,) = list(recording_proxy.chat_requests())
    print(f"[proxy] held after {HELD_AFTER} content chunks: {cut.held}; forwarded {cut.forwarded_content()!r}")

    assert cut.request_json()["max_tokens"] == LONG_ANSWER_TOKENS
    # The proxy notices the hang-up at its next read or write of the still running answer.
    assert cut.over.wait(timeout=300), "the proxy is still relaying the interrupted answer"
    assert cut.hung_up, "the kernel kept the interrupted request open"
    assert not cut.forwarded_end(), "the kernel was sent the end of the answer: not interrupted mid-stream"
    assert not cut.upstream_finished, "the server had finished the answer before the kernel hung up"
    assert streamed and cut.forwarded_content().startswith(streamed), (streamed, cut.forwarded_content())

    # The cell fails in one line (AgentMagics.fail_on: a Run All stops there), no traceback.
    assert run.status == "error" and run.reply.get("ename") == "AgentTurnFailed", run.reply
    assert len(run.reply["traceback"]) == 1 and "(interrupted)" in run.reply["traceback"][0], run.reply
    ends = [e["status"] for e in run.events if e.get("type") == "turn_end"]
    assert ends == ["interrupted"], ends
    result = turn(kernel)
    assert result["status"] == "interrupted", result
    assert kernel.value("_agent.messages[-1]['role']") == "assistant"
    assert kernel.value(HISTORY_PROBLEMS) == []
    # The text shown before Ctrl-C stays in the history (the view may have been a chunk behind).
    history = kernel.value("[m.get('content') for m in _agent.messages if m['role'] == 'assistant']")
    print(f"[history] assistant messages after Ctrl-C: {history}")
    assert any(str(c).startswith(streamed) for c in history), history

    after = kernel.run(agent_cell("Say OK.", provider="_steady")).check()
    interrupted, result = result, turn(kernel)
    said("the cell after Ctrl-C", result["text"], after.seconds)
    assert result["turn_id"] != interrupted["turn_id"]
    assert result["status"] == "completed", result
    assert result["text"].strip()
    assert kernel.value(HISTORY_PROBLEMS) == []
    # The next request carried the interrupted exchange and the server answered it whole.
    _, following = list(recording_proxy.chat_requests())
    assert following.status == 200 and following.upstream_finished
    assert following.response_text().rstrip().endswith("data: [DONE]")
    sent = [str(m.get("content")) for m in following.request_json()["messages"] if m["role"] == "assistant"]
    print(f"[wire] assistant messages sent after Ctrl-C: {sent}")
    assert any(c.startswith(streamed) for c in sent), sent


def test_auto_finds_the_served_model_from_the_base_url_alone(local_model, recording_proxy, agent_kernel):
    kernel = agent_kernel()
    # provider auto, no model: what the README promises (`%%agent` alone), bounded
    run = kernel.run(agent_cell("Say hi.", provider="_auto")).check()
    result = turn(kernel)
    said("auto", result["text"], run.seconds)
    assert result["status"] == "completed", result
    models = [e.request_json().get("model") for e in recording_proxy.chat_requests()]
    assert models == [local_model.model], f"auto sent model {models}; the server lists {local_model.model!r}"


def test_a_second_cell_continues_the_history(local_model, recording_proxy, agent_kernel):
    kernel = agent_kernel()
    first_prompt = "My favourite colour is teal. Reply with one short sentence."
    first = kernel.run(agent_cell(first_prompt)).check()
    one = turn(kernel)
    said("first cell", one["text"], first.seconds)
    second = kernel.run(agent_cell("What is my favourite colour?")).check()
    two = turn(kernel)
    said("second cell", two["text"], second.seconds)

    assert one["status"] == two["status"] == "completed", (one, two)
    assert two["n_messages"] > one["n_messages"] >= 2
    contents = kernel.value("[m.get('content') for m in _agent.messages]")
    assert first_prompt in contents
    assert kernel.value(HISTORY_PROBLEMS) == []
    # The second request carried the first exchange to the server.
    requests = [e.request_json() for e in recording_proxy.chat_requests()]
    assert len(requests) == 2
    sent = [m.get("content") for m in requests[1]["messages"]]
    assert first_prompt in sent and one["text"].strip() in "".join(str(c) for c in sent)


def test_tools_are_offered_and_a_text_answer_leaves_a_clean_history(local_model, recording_proxy, agent_kernel):
    kernel = agent_kernel()
    kernel.run("sales = {'jan': 10, 'feb': 12}").check()
    run = kernel.run(agent_cell("Which variables are defined? Use a tool.")).check()
    result = turn(kernel)
    tool_calls = kernel.value("[(c.name, c.status) for c in _agent.tool_calls]")
    said("tools offered", result["text"], run.seconds)
    print(f"[tools] calls made: {tool_calls}")

    request = next(recording_proxy.chat_requests()).request_json()
    offered = {t["function"]["name"]: t["function"] for t in request.get("tools", [])}
    # The tools this prompt needs, run_python (always offered), and find_tools, which names
    # the tools that were not selected (#26: offered on request, not in every request).
    assert {"list_variables", "run_python", "find_tools"} <= set(offered), list(offered)
    assert all(name in offered["find_tools"]["description"] for name in ("read_file", "list_files")
               if name not in offered), offered["find_tools"]
    # llama-cpp-python answers in text when tool_choice is auto (a grammar only for a
    # named function), so nothing here could interrupt or prolong the turn.
    assert result["status"] == "completed", result
    assert result["error"] is None
    assert kernel.value(HISTORY_PROBLEMS) == []
    assert all(e.status == 200 for e in recording_proxy.chat_requests())


FORCED_PROVIDER = """
from jupyter_brain.providers.openai_compat import OpenAICompatProvider

class FirstStepCallsListVariables(OpenAICompatProvider):
    # llama-cpp-python streams a tool call only when tool_choice names the function
    # (its automatic choice refuses to stream), so the first step asks for one.
    def request_params(self, messages, tools):
        params = super().request_params(messages, tools)
        if tools and messages[-1].get("role") == "user":
            params["tool_choice"] = {"type": "function", "function": {"name": "list_variables"}}
        return params

# A bounded answer: after the tool result the tiny model can ramble for its whole window.
forced = FirstStepCallsListVariables(%r, max_tokens=160)
sales = {'jan': 10, 'feb': 12}
"""


def test_a_real_tool_call_runs_and_the_next_request_is_accepted(local_model, recording_proxy, agent_kernel):
    kernel = agent_kernel()
    kernel.run(FORCED_PROVIDER % local_model.model).check()
    run = kernel.run(agent_cell("Which variables are defined?", "--max-steps 2", provider="forced")).check()
    result = turn(kernel)
    tool_calls = kernel.value("[(c.name, c.status, c.output[:80]) for c in _agent.tool_calls]")
    said("after a tool call", result["text"], run.seconds)
    print(f"[tools] calls made: {tool_calls}; arguments: {kernel.value('[c.arguments for c in _agent.tool_calls]')}")
    for exchange in recording_proxy.chat_requests():
        print(f"[wire] HTTP {exchange.status}: {exchange.response_text()[:400]!r}")

    assert kernel.value(HISTORY_PROBLEMS) == []
    assert [name for name, _, _ in tool_calls] == ["list_variables"], tool_calls
    assert tool_calls[0][1] == "ok", tool_calls
    assert all(e.status == 200 for e in recording_proxy.chat_requests()), "the server refused a request"
    assert result["status"] == "completed", result
