"""Token usage for servers that report none (Ollama without ``include_usage``, some proxies).

Showing 0 tokens would make costs and the context gauge lie, so the request and the
answer are counted locally with the tokenizer and the ``Usage`` is marked ``estimated``.
"""

from __future__ import annotations

from collections.abc import Sequence

from jupyter_brain.foundation.tokens import TokenCounter
from jupyter_brain.providers.base import Message, ProviderResult, ToolSchema, Usage

_counter: TokenCounter | None = None


def _tokens() -> TokenCounter:
    global _counter
    if _counter is None:
        _counter = TokenCounter()
    return _counter


def estimate_usage(
    messages: Sequence[Message], tools: Sequence[ToolSchema], result: ProviderResult
) -> Usage:
    """The usage this request and answer would have been reported with, roughly."""
    counter = _tokens()
    output = counter.count_message(result.to_message())
    return Usage(
        input_tokens=counter.count_request(messages, tools),
        output_tokens=output,
        estimated=True,
    )


def reported_nothing(usage: Usage) -> bool:
    """A server that sent no usage, or only zeros, reported nothing."""
    return usage.input_tokens == usage.output_tokens == usage.cache_read_tokens == 0
