"""The notebook's sampler (notebook/sampling.py): the permission mode decides, the approval
is asked like a tool's (events for the card, the approver), and a refusal is one line."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from jupyter_brain.agent.events import ApprovalDecision, ApprovalRequest
from jupyter_brain.agent.executor import Approval
from jupyter_brain.mcp.client_hooks import SamplingRefused, SamplingRequest
from jupyter_brain.notebook.headless import HeadlessApprover
from jupyter_brain.notebook.sampling import NotebookSampler, SamplingTurn
from jupyter_brain.providers.scripted import ScriptedProvider


def _request(**extra) -> SamplingRequest:
    fields = {"server": "srv", "messages": [("user", "say hi"), ("user", "politely")], "system_prompt": "Be brief.",
              "max_tokens": 20, "temperature": None, "stop_sequences": [], "model_hints": [], "call_id": "c7"}
    return SamplingRequest(**{**fields, **extra})


def _turn(permission: str, approver=None, provider=None) -> tuple[SamplingTurn, list]:
    emitted: list = []
    turn = SamplingTurn(permission, approver, provider or ScriptedProvider(["Hi."]), timeout_s=30)
    turn.ctx = SimpleNamespace(emit=emitted.append)
    return turn, emitted


def test_auto_answers_with_the_turns_provider_and_its_usage():
    bot = ScriptedProvider([{"text": "Hello there. END more", "usage": {"input_tokens": 12, "output_tokens": 4}}])
    sampler = NotebookSampler(SimpleNamespace(permission="ask"))
    turn, emitted = _turn("auto", provider=bot)
    sampler.begin(turn)
    reply = sampler(_request(stop_sequences=["END"]))
    assert (reply.text, reply.stop_reason, reply.input_tokens, reply.output_tokens) == ("Hello there. ", "stopSequence", 12, 4)
    assert bot.calls[0]["messages"] == [{"role": "system", "content": "Be brief."},
                                        {"role": "user", "content": "say hi\n\npolitely"}]
    assert emitted == []  # nothing to ask in auto


def test_read_only_refuses_without_a_model_call():
    bot = ScriptedProvider(["never"])
    sampler = NotebookSampler(SimpleNamespace(permission="auto"))
    sampler.begin(_turn("read-only", provider=bot)[0])
    with pytest.raises(SamplingRefused, match="refused in permission mode read-only"):
        sampler(_request())
    assert bot.calls == []


def test_ask_shows_a_card_under_the_waiting_call_and_a_denial_refuses():
    seen = []

    def approver(call, spec, arguments):
        seen.append((call.id, spec.name, spec.effect, arguments))
        return Approval(False, by="user", channel="widget")

    sampler = NotebookSampler(SimpleNamespace(permission="ask"))
    turn, emitted = _turn("ask", approver)
    sampler.begin(turn)
    with pytest.raises(SamplingRefused, match="^sampling for MCP server 'srv' was refused: the user denied this call$"):
        sampler(_request(messages=[("user", "x" * 2000)]))
    [(call_id, name, effect, arguments)] = seen
    assert call_id.startswith("c7~sampling") and (name, effect) == ("srv sampling", "sampling")
    assert arguments["max_tokens"] == 20 and arguments["messages"].startswith("user: xxx")
    assert arguments["messages"].endswith("… (1400 more characters)")
    request, decision = emitted
    assert isinstance(request, ApprovalRequest) and request.call_id == call_id
    assert request.preview["parent_call_id"] == "c7"
    assert isinstance(decision, ApprovalDecision) and (decision.call_id, decision.approved) == (call_id, False)


def test_ask_in_a_headless_run_is_refused_at_once():
    sampler = NotebookSampler(SimpleNamespace(permission="ask"))
    sampler.begin(_turn("ask", HeadlessApprover())[0])
    with pytest.raises(SamplingRefused, match="no way to ask the user here"):
        sampler(_request())


def test_between_turns_ask_refuses_and_auto_answers_with_the_last_provider(shell):
    magics = shell.magics_manager.registry["AgentMagics"]
    sampler = NotebookSampler(magics)
    with pytest.raises(SamplingRefused, match="no model to sample with"):
        sampler(_request())
    bot = ScriptedProvider([{"text": "Later.", "usage": {"input_tokens": 5, "output_tokens": 2}}])
    turn, _ = _turn("auto", provider=bot)
    sampler.begin(turn)
    sampler.end(turn)
    with pytest.raises(SamplingRefused, match="no %%agent turn is running to ask in"):
        sampler(_request())  # AgentMagics.permission is ask
    magics.permission = "auto"
    assert sampler(_request()).text == "Later."
    [record] = magics.manager.event_log.records("mcp_sampling")
    assert (record["server"], record["input_tokens"], record["output_tokens"]) == ("srv", 5, 2)


def test_a_failing_model_call_is_a_one_line_refusal():
    bot = ScriptedProvider([{"error": "overloaded\nsecond line"}])
    sampler = NotebookSampler(SimpleNamespace(permission="auto"))
    sampler.begin(_turn("auto", provider=bot)[0])
    with pytest.raises(SamplingRefused) as info:
        sampler(_request())
    assert str(info.value).startswith("the model call failed (") and "\n" not in str(info.value)


class _Limited(ScriptedProvider):
    """A scripted provider with an output limit of its own, like the real ones."""

    def __init__(self, answers, max_tokens):
        super().__init__(answers)
        self.max_tokens = max_tokens
        self.limits: list = []

    def generate(self, messages, tools, **kwargs):
        self.limits.append(self.max_tokens)
        return super().generate(messages, tools, **kwargs)


@pytest.mark.parametrize(("own", "asked", "used"), [(None, 20, 20), (4096, 20, 20), (10, 20, 10)])
def test_the_servers_max_tokens_limits_the_completion_and_the_turns_provider_is_untouched(own, asked, used):
    bot = _Limited(["Hi."], own)
    sampler = NotebookSampler(SimpleNamespace(permission="auto"))
    sampler.begin(_turn("auto", provider=bot)[0])
    sampler(_request(max_tokens=asked))
    assert bot.limits == [used]  # the call's limit (lists are shared with the shallow copy)
    assert bot.max_tokens == own  # the turn's provider keeps its own
