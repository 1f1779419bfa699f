"""Histories for the compaction tests: long conversations with tool rounds and signed
thinking, and the invariants every compaction keeps."""

from __future__ import annotations

from jupyter_brain.agent.context.compaction import SUMMARY_HEADER
from jupyter_brain.agent.history import signatures, units, validate_history

TOPICS = [
    "plot the temperature histogram for the weather station",
    "clean the customer address table and fix postcodes",
    "compute the quarterly revenue by region from sales.csv",
    "train the churn classifier with gradient boosting",
    "rename the notebook variables to snake case",
    "profile the slow image resize loop",
    "draw a map of delivery routes",
    "parse the server log timestamps",
    "merge the two survey spreadsheets",
    "fit a seasonal model to the sensor readings",
    "export the figures as portable graphics",
    "check the unit tests of the parser module",
]
FILLER = ("apple", "river", "stone", "cloud", "green", "table", "house", "light", "music", "paper",
          "glass", "train", "field", "storm", "horse", "chair", "bread", "smile", "water", "plant")


def filler(seed: int, words: int) -> str:
    return " ".join(FILLER[(seed * 7 + i * 3) % len(FILLER)] for i in range(words))


class Ids:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"call_{self.n}"


def assistant(text: str = "", *, calls=(), sig: str | None = None, redacted: bool = False) -> dict:
    msg: dict = {"role": "assistant", "content": text}
    if sig:
        msg["thinking"] = [{"text": f"Thinking about {text or 'the next step'}", "signature": sig}]
        if redacted:
            msg["thinking"].append({"text": "", "redacted": True, "data": f"opaque-{sig}"})
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


def tool_unit(ids: Ids, topic: str, seed: int, n_calls: int, result_words: int, *, sig: str | None) -> list[dict]:
    calls = [{"id": ids(), "name": "read_file", "arguments": {"path": f"data_{seed}_{k}.csv"}} for k in range(n_calls)]
    out = [assistant("", calls=calls, sig=sig)]
    for c in calls:
        out.append({"role": "tool", "tool_call_id": c["id"], "name": c["name"],
                    "content": f"{topic}: " + filler(seed, result_words), "is_error": False})
    return out


def make_history(turns: int = 10, *, steps: int = 2, calls: int = 1, result_words: int = 300,
                 current_steps: int = 3, summary: bool = True) -> tuple[list[dict], int]:
    """A long conversation: an earlier summary, ``turns`` exchanges with tool rounds and
    signed thinking, then the current turn (about revenue) with ``current_steps`` rounds."""
    ids = Ids()
    msgs: list[dict] = []
    if summary:
        msgs.append({"role": "user", "content": f"{SUMMARY_HEADER}\nThe user loaded the project data.",
                     "kind": "summary"})
    for t in range(turns):
        topic = TOPICS[t % len(TOPICS)]
        msgs.append({"role": "user", "content": f"Please {topic}."})
        for s in range(steps):
            msgs += tool_unit(ids, topic, t * 10 + s, calls, result_words, sig=f"sig-{t}-{s}")
        msgs.append(assistant(f"Done: {topic}.", sig=f"sig-{t}-final", redacted=t % 3 == 0))
    protect = len(msgs)
    msgs.append({"role": "user", "content": "Now compare the quarterly revenue growth across regions."})
    for s in range(current_steps):
        msgs += tool_unit(ids, "current step", 900 + s, 2, result_words, sig=f"sig-current-{s}")
    return msgs, protect


def check(result, original: list[dict], snapshot: list[dict], protect: int) -> None:
    """The invariants every compaction keeps."""
    out = result.messages
    validate_history(out)
    assert original == snapshot, "the input history was mutated"
    assert result.messages_after == len(out) and result.messages_before == len(original)
    # the current user message, the same object, and nothing of the current turn reordered
    if protect < len(original):
        assert any(m is original[protect] for m in out)
        assert original[protect] == snapshot[protect]
    # the latest unit is kept as it was
    last = units(original)[-1]
    tail = original[last.start:last.end]
    assert out[len(out) - len(tail):] == tail
    assert all(a is b for a, b in zip(out[len(out) - len(tail):], tail, strict=True))
    # assistant messages are kept as the same objects (so signed thinking is byte-identical)
    originals = {id(m) for m in original}
    for m in out:
        if m.get("role") == "assistant":
            assert id(m) in originals
    kept_sigs = signatures(out)
    assert set(kept_sigs) <= set(signatures(original))
    assert not (result.fallback or "").startswith("compaction skipped"), result.fallback


def fake_summarizer(calls: list):
    def summarize(messages: list[dict]) -> str:
        calls.append(messages)
        return f"The user asked for {sum(m['role'] == 'user' for m in messages)} things; all done."
    return summarize


def failing_summarizer(messages):
    raise RuntimeError("model unavailable")
