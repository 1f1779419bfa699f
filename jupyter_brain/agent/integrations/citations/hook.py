"""The answer's Sources: read from the turn's shared ``Sources`` (what the context pack
and web search put there) and its tool calls, appended to the answer before ``TurnEnd``
with one ``Citations`` event."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from ...citations import local_citations, sources_markdown
from ...events import Citations
from ...hooks import Answer, TurnContext, TurnHook


class CitationsIntegration:
    """Active in the turns run with ``show_citations=True``."""

    name: ClassVar[str] = "citations"
    turn_options: ClassVar[tuple[str, ...]] = ("show_citations",)  # off: for_turn is not called

    def for_turn(self, ctx: TurnContext) -> TurnHook | None:
        return CitationsHook() if ctx.options.show_citations else None


class CitationsHook(TurnHook):
    name = "citations"

    def finish_answer(self, ctx: TurnContext, answer: Answer) -> Answer:
        sources = ctx.sources
        sources.local = local_citations(sources.context_pack, answer.tool_calls, answer.text,
                                        ctx.working_directory, earlier=sources.local)
        web = [{str(k): str(v) for k, v in c.items()} for c in sources.web if isinstance(c, dict)]
        ctx.emit(Citations(step=answer.step, local=sources.local, web=web))
        section = sources_markdown(sources.local, web)
        if section and answer.text.strip():
            return dataclasses.replace(answer, text=f"{answer.text.rstrip()}\n\n{section}")
        return answer
