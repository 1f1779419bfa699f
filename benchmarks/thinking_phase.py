"""The thinking phase (issue #17) on the reference scenario: what it saves, what it keeps.

Scenario (../shared/reference/thinking_cycle_proposal.md, scaffolding from
``benchmarks/context.py``): a 5,000-token workspace, one cell of 50 tool steps whose results
are ~300 tokens of data rows; the results of steps 1-10 each carry one planted fact (a
needle: "the audit code for <region> is <code>", the codes unique). A second cell then asks
the ten questions. The scripted main model answers them from the text of that last request
only (a regex per question: key and value in one sentence), so a fact that left the context
is a wrong answer.

Runs: (a) the naive loop of the proposal (the workspace appended to history every cycle),
(b) jupyter-brain with the phase off (no compaction; the default summary compaction at a
16k budget), (c) the phase on with each strategy. The model-backed strategies (summary,
semantic) use a separate scripted thinking model (``thinking_provider``), a stand-in that
writes a summary, a state and a next action but no insights: what facts survive is the
phase's own extractive insight keeping. Latency is wall time per model request with no
sleeps (the harness's own cost). Prints figures; asserts nothing.

    python benchmarks/thinking_phase.py [--steps 50] [--workspace-tokens 5000]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from context import COUNTER, make_tool, naive, text_of_tokens

from jupyter_brain.agent.events import EventLog, ThinkingPhaseEvent
from jupyter_brain.agent.harness import AgentHarness
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.foundation.tokens import TokenCounter, text_of
from jupyter_brain.providers.scripted import ScriptedProvider

REGIONS = ("North", "South", "East", "West", "Central", "Harbor", "Alpine", "Delta", "Summit", "Valley")
NEEDLES = {region: f"{chr(65 + i)}{chr(88 - i)}-{4821 + 137 * i}" for i, region in enumerate(REGIONS)}
TASK = "Go through all parts of the monthly sales rows and keep track of what you find."
QUESTIONS = "Answer from what you found: " + " ".join(f"What is the audit code for {r}?" for r in REGIONS)


def needle_tool(result_tokens: int):
    """``fetch_rows`` of benchmarks/context.py with a needle in parts 1-10."""
    base = make_tool(result_tokens - 20)

    @tool
    def fetch_rows(part: int) -> str:
        """Fetch one part of the monthly sales rows."""
        text = base.fn(part=part)
        if 1 <= part <= len(REGIONS):
            region = REGIONS[part - 1]
            text += f"\nNote: the audit code for {region} is {NEEDLES[region]}."
        return text

    return fetch_rows


def answer_from(request: list[dict]) -> dict[str, str | None]:
    """The scripted model's answers: only what the request's text says."""
    text = "\n".join(text_of(m.get("content")) for m in request)
    out: dict[str, str | None] = {}
    for region in REGIONS:
        m = re.search(rf"audit code for {region} is ([A-Z]{{2}}-\d{{4}})", text)
        out[region] = m.group(1) if m else None
    return out


def request_text(request: list[dict]) -> str:
    return "\n".join(text_of(m.get("content")) for m in request)


def thinker(messages, tools) -> str:
    """The scripted thinking model: summary, state and next action; no insights."""
    prompt = text_of(messages[-1].get("content"))
    parts = re.findall(r"fetch_rows\(part=(\d+)\)", prompt)
    last = parts[-1] if parts else "?"
    return (f"Summary: fetching the monthly sales rows part by part; latest part {last}.\n"
            f"State: part {last} read.\nNext: fetch the next part.")


def run(steps: int, workspace: str, fetch, *, phase: str | None, compaction: str | None, budget: int) -> dict:
    answers: dict[str, str | None] = {}

    def final(messages, tools):
        answers.update(answer_from(messages))
        return "; ".join(f"{r}: {v}" for r, v in answers.items())

    script: list = [{"text": f"Fetching part {i}.", "tool_calls": [{"name": "fetch_rows", "arguments": {"part": i}}]}
                    for i in range(steps)]
    script += ["I went through every part.", final]
    provider = ScriptedProvider(script)
    thinking = ScriptedProvider(summaries=[thinker] * (4 * steps), model="scripted-thinker")
    log = EventLog(":memory:")
    harness = AgentHarness(
        provider, AgentToolRegistry([fetch]), log, max_steps=steps + 1, timeout_s=600,
        workspace=lambda: workspace, context_budget=budget, compaction=compaction or "token_budget",
        auto_compact=compaction is not None, token_counter=TokenCounter(),
        thinking_phase=phase is not None, thinking_strategy=phase or "summary", thinking_provider=thinking,
    )
    started = time.perf_counter()
    first = harness.run_turn("bench", [], TASK)
    second = harness.run_turn("bench", first.messages, QUESTIONS)
    elapsed = time.perf_counter() - started
    main = [c for c in provider.calls if not c["summary"]]
    sizes = [COUNTER.count_request(c["messages"], c["tools"]) for c in main]
    side = [COUNTER.count_request(c["messages"], c["tools"]) for c in provider.calls if c["summary"]]
    side += [COUNTER.count_request(c["messages"], c["tools"]) for c in thinking.calls]
    phases = [e for e in log.events() if isinstance(e, ThinkingPhaseEvent)]
    final_text = request_text(main[-1]["messages"])
    history = COUNTER.count_messages(m for m in main[-1]["messages"] if m.get("role") != "system")
    return {
        "sizes": sizes, "overhead": sum(side), "side_calls": len(side), "seconds": elapsed,
        "phases": phases, "status": {first.status, second.status}, "history": history,
        "kept": sum(v in final_text for v in NEEDLES.values()),
        "right": sum(answers.get(r) == v for r, v in NEEDLES.items()),
        "phase_seconds": sum(e.duration_ms for e in phases) / 1000,
        "counted": first.thinking_phase_input_tokens + first.thinking_phase_output_tokens,
        "counted_calls": first.thinking_phase_calls + second.thinking_phase_calls,
    }


def naive_run(steps: int, workspace: str, fetch, schemas) -> dict:
    """(a): request sizes of benchmarks/context.py's naive loop, plus the questions' request
    (its last request + the answer + the question); it keeps everything, so every needle."""
    sizes = naive(steps, workspace, fetch, schemas)
    extra = COUNTER.count_message({"role": "assistant", "content": "I went through every part."})
    extra += COUNTER.count_message({"role": "user", "content": QUESTIONS})
    sizes.append(sizes[-1] + extra)
    return {"history": 0, "sizes": sizes, "overhead": 0, "side_calls": 0, "seconds": 0.0, "phases": [], "status": {"-"},
            "kept": len(NEEDLES), "right": len(NEEDLES), "phase_seconds": 0.0, "counted": 0, "counted_calls": 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--workspace-tokens", type=int, default=5_000)
    parser.add_argument("--result-tokens", type=int, default=300)
    parser.add_argument("--budget", type=int, default=16_000, help="context budget (tokens) of the runs with compaction")
    args = parser.parse_args()

    workspace = "<workspace>\n" + text_of_tokens(args.workspace_tokens - 4, "var") + "\n</workspace>"
    fetch = needle_tool(args.result_tokens)
    schemas = AgentToolRegistry([fetch]).schemas()
    print(f"scenario: {args.steps} tool steps in one cell + one cell of {len(NEEDLES)} questions; workspace "
          f"{COUNTER.count_text(workspace):,} tokens; tool result ~{COUNTER.count_text(fetch.fn(part=1)):,} tokens; "
          f"needles in the results of steps 1-{len(NEEDLES)} (tokenizer: tiktoken cl100k)\n")

    runs = [("(a) naive loop", naive_run(args.steps, workspace, fetch, schemas))]
    for label, phase, compaction in (
        ("(b) phase off, no compaction", None, None),
        ("(b) phase off, compaction", None, "summary"),
        ("(c) phase: summary", "summary", None),
        ("(c) phase: semantic", "semantic", None),
        ("(c) phase: token_budget", "token_budget", None),
    ):
        runs.append((label, run(args.steps, workspace, fetch, phase=phase, compaction=compaction, budget=args.budget)))

    naive_total = sum(runs[0][1]["sizes"]) + runs[0][1]["overhead"]
    base_history = runs[1][1]["history"]
    head = (f"{'run':<30}{'input total':>12}{'vs naive':>9}{'per req':>9}{'last req':>9}{'think ovh':>10}"
            f"{'calls':>7}{'ms/cycle':>9}{'compress':>9}{'needles':>9}{'answers':>9}")
    print(head)
    print("-" * len(head))
    for label, r in runs:
        sizes = r["sizes"]
        total = sum(sizes) + r["overhead"]
        compress = f"{base_history / r['history']:.1f}x" if r["history"] and label.startswith("(c)") else "-"
        ms = f"{r['seconds'] * 1000 / len(sizes):.1f}" if r["seconds"] else "-"
        print(f"{label:<30}{total:>12,}{f'1/{naive_total / total:.1f}':>9}{total // len(sizes):>9,}{sizes[-1]:>9,}"
              f"{r['overhead']:>10,}{len(sizes) + r['side_calls']:>7}{ms:>9}{compress:>9}"
              f"{r['kept'] / len(NEEDLES):>9.0%}{r['right'] / len(NEEDLES):>9.0%}")
        if r["status"] - {"completed", "-"}:
            print(f"{'':<30}  turn status: {', '.join(sorted(r['status']))}")
    print(
        "\ninput total: every request's input tokens, thinking-model and summary calls included; per req: main\n"
        "requests only; think ovh: input tokens of the thinking/summary calls; calls: API calls (main + side);\n"
        "ms/cycle: wall time per main request (scripted, no sleeps; the phase's share below); compress: history\n"
        "tokens of the final request, phase off (no compaction) / phase on; needles: planted values present in the final request;\n"
        "answers: questions the scripted model answered right from that request alone."
    )
    for label, r in runs:
        if r["phases"]:
            n = len(r["phases"])
            print(f"{label}: {n} phases, {r['phase_seconds'] * 1000 / n:.2f} ms each; thinking tokens counted on "
                  f"TurnResult: {r['counted']:,} in {r['counted_calls']} calls")
    verdicts = []
    for label, r in runs:
        if not label.startswith("(c)"):
            continue
        total = sum(r["sizes"]) + r["overhead"]
        ok = total * 20 <= naive_total and r["kept"] / len(NEEDLES) >= 0.9
        verdicts.append(f"  {label[4:]:<24} 1/{naive_total / total:.1f} of naive, {r['kept'] / len(NEEDLES):.0%} "
                        f"needles kept → {'meets' if ok else 'MISSES'} the goal (≤ 1/20, ≥ 90%)")
    print("\nverdict:")
    print("\n".join(verdicts))
    print("  Caveat: the needles are prose sentences among rows of bare data, the kind of statement the extractive\n"
          "  insight keeper looks for; facts hidden in the data rows themselves would not be kept by it.")


if __name__ == "__main__":
    main()
