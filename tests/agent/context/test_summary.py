"""Summary requests and the provider-backed summarizer."""

from __future__ import annotations

from jupyter_brain.agent.context.compactors import SlidingWindowSummary
from jupyter_brain.agent.context.summary import provider_summarizer, summary_request
from jupyter_brain.providers.scripted import ScriptedProvider

from .histories import make_history


def test_summary_request_renders_a_clipped_transcript() -> None:
    history, protect = make_history(turns=2, result_words=2000)
    req = summary_request(history[:protect])
    assert req[0]["role"] == "system" and req[0]["kind"] == "summary_request"
    text = req[1]["content"]
    assert req[1]["role"] == "user" and "User: Please plot the temperature histogram" in text
    assert "Assistant called read_file(path='data_0_0.csv')" in text
    assert "more characters]" in text and len(text) < 30_000
    assert "Thinking about" not in text  # private reasoning stays out


def test_provider_summarizer_with_the_scripted_provider(counter) -> None:
    provider = ScriptedProvider([], summaries=["The user analysed revenue."])
    summarize = provider_summarizer(provider)
    history, protect = make_history(turns=8)
    r = SlidingWindowSummary().compact(history, budget_tokens=counter.count_messages(history) // 2,
                                       counter=counter, protect_from=protect, summarize=summarize)
    assert r.summarized and "The user analysed revenue." in r.messages[0]["content"]
    assert provider.calls[0]["summary"] and provider.calls[0]["tools"] == []
