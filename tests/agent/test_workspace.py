"""Workspace rendering: stable, bounded, failures as notes (the notebook's sections: tests/tools)."""

from __future__ import annotations

from jupyter_brain.agent.workspace import Workspace, WorkspaceSection


def words(text: str) -> int:
    return len(text.split())


def test_sections_render_in_order_and_the_render_is_stable() -> None:
    state = {"n": 1}
    ws = Workspace([WorkspaceSection("A", lambda: f"value {state['n']}"), WorkspaceSection("B", lambda: "b")])
    first = ws.render()
    assert first == "<workspace>\n## A\nvalue 1\n## B\nb\n</workspace>"
    assert ws.render() == first
    state["n"] = 2
    assert "value 2" in ws.render()


def test_memory_addresses_are_removed_so_the_text_is_cacheable() -> None:
    class Thing:
        pass

    thing = Thing()
    ws = Workspace([WorkspaceSection("V", lambda: repr(thing))])
    assert "0x" not in ws.render()


def test_a_failing_section_is_a_note_not_an_exception() -> None:
    def broken() -> str:
        raise RuntimeError("no disk")

    assert "(unavailable: RuntimeError: no disk)" in Workspace([WorkspaceSection("Files", broken)]).render()


def test_budget_clips_the_largest_section_and_says_so() -> None:
    big = "\n".join(f"line {i} with several words in it" for i in range(500))
    ws = Workspace([WorkspaceSection("Big", lambda: big, weight=1), WorkspaceSection("Small", lambda: "tiny")],
                   budget_tokens=300, count=words)
    text = ws.render()
    assert words(text) <= 300
    assert "more lines not shown" in text
    assert text.rstrip().endswith("## Small\ntiny\n</workspace>")


def test_unused_share_goes_to_sections_that_need_it() -> None:
    big = "\n".join(f"row {i}" for i in range(100))
    ws = Workspace([WorkspaceSection("Small", lambda: "x", weight=5), WorkspaceSection("Big", lambda: big, weight=1)],
                   budget_tokens=260, count=words)
    assert "more lines not shown" not in ws.render()
