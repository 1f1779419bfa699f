"""Context cost of a long tool loop: the naive loop of the reference proposal vs
jupyter-brain with each compaction strategy, and the prompt-cache share it earns.

The reference scenario (../shared/reference/thinking_cycle_proposal.md): a 5,000-token
workspace, 50 tool steps whose results are ~300 tokens, the scripted provider.

(a) naive: the workspace is appended to history every cycle (the proposal's bug), so
    request k carries k copies of it.
(b) jupyter-brain: the workspace is rendered fresh into each request and never stored;
    the history is compacted at the critical level of the context budget.

Token counts are the real tokenizer's (tiktoken cl100k via jupyter_brain.agent.context).
The cache part runs the same turn through the real Anthropic provider and SDK against the
mock Messages server, whose prompt-cache model (tests/prompt_cache.py) reports
``cache_read_input_tokens`` the way the API documents it.

Goals: total input ≤ 1/10 of (a); no request above the budget; flat after the first
compaction; cache-read share ≥ 80% in steady state. Prints figures; asserts nothing.

    python benchmarks/context.py [--steps 50] [--budget 16000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from jupyter_brain.agent.context import SUMMARY_INSTRUCTION, TokenCounter  # noqa: E402
from jupyter_brain.agent.events import CompactionEvent, EventLog  # noqa: E402
from jupyter_brain.agent.harness import SYSTEM_PROMPT, AgentHarness  # noqa: E402
from jupyter_brain.agent.tools import AgentToolRegistry, tool  # noqa: E402
from jupyter_brain.providers.scripted import ScriptedProvider  # noqa: E402

COUNTER = TokenCounter()
STRATEGIES = ("summary", "token_budget", "semantic")


def text_of_tokens(n: int, word: str) -> str:
    """Deterministic filler of about ``n`` tokens."""
    parts: list[str] = []
    i = 0
    while True:
        parts.append(f"{word}{i % 97}={i * 7919 % 10007};")
        i += 1
        if i % 25 == 0 and COUNTER.count_text(" ".join(parts)) >= n:
            break
    text = " ".join(parts)
    while COUNTER.count_text(text) > n:
        text = text.rsplit(" ", 1)[0]
    return text


def make_tool(result_tokens: int):
    rows = {i: text_of_tokens(result_tokens - 8, f"row{i}_") for i in range(8)}

    @tool
    def fetch_rows(part: int) -> str:
        """Fetch one part of the monthly sales rows."""
        return f"part {part}: {rows[part % 8]}"

    return fetch_rows


def per_turn(steps: int, turns: int) -> list[int]:
    return [steps // turns + (1 if t < steps % turns else 0) for t in range(turns)]


def question(t: int) -> str:
    return "Which month had the largest revenue drop?" if t == 0 else f"Follow-up {t}: and in region {t}?"


def script(steps: int, turns: int = 1) -> list:
    out: list = []
    i = 0
    for t, n in enumerate(per_turn(steps, turns)):
        for _ in range(n):
            out.append({"text": f"Fetching part {i}.", "tool_calls": [{"name": "fetch_rows", "arguments": {"part": i}}]})
            i += 1
        out.append(f"Answer {t}: revenue dropped most in March.")
    return out


# ── (a) the naive loop ───────────────────────────────────────────────────────


def naive(steps: int, workspace: str, fetch, schemas, turns: int = 1) -> list[int]:
    """Request sizes when each cycle appends the workspace to history (the bug)."""
    history: list[dict] = []
    sizes = []
    i = 0
    for t, n in enumerate(per_turn(steps, turns)):
        history.append({"role": "user", "content": question(t)})
        for k in range(n + 1):
            request = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "system", "content": workspace}, *history]
            sizes.append(COUNTER.count_request(request, schemas))
            if k == n:
                history.append({"role": "assistant", "content": f"Answer {t}: revenue dropped most in March."})
                break
            call = {"id": f"c{i}", "name": "fetch_rows", "arguments": {"part": i}}
            history.append({"role": "assistant", "content": f"Fetching part {i}.", "tool_calls": [call]})
            history.append({"role": "tool", "tool_call_id": f"c{i}", "name": "fetch_rows",
                            "content": fetch.fn(part=i), "is_error": False})
            history.append({"role": "system", "content": workspace})  # addSystemMessageToHistory(workspace)
            i += 1
    return sizes


# ── (b) jupyter-brain ────────────────────────────────────────────────────────


def ours(steps: int, workspace: str, fetch, budget: int, strategy: str | None, turns: int = 1) -> dict:
    provider = ScriptedProvider(script(steps, turns))
    log = EventLog(":memory:")
    harness = AgentHarness(
        provider, AgentToolRegistry([fetch]), log, max_steps=steps + 1, timeout_s=600,
        workspace=lambda: workspace, context_budget=budget, compaction=strategy or "token_budget",
        auto_compact=strategy is not None, token_counter=TokenCounter(),
    )
    started = time.perf_counter()
    history: list = []
    statuses = set()
    for t in range(turns):
        result = harness.run_turn("bench", history, question(t))
        history = result.messages
        statuses.add(result.status)
    elapsed = time.perf_counter() - started
    sizes = [COUNTER.count_request(c["messages"], c["tools"]) for c in provider.calls if not c["summary"]]
    summary_sizes = [COUNTER.count_request(c["messages"], c["tools"]) for c in provider.calls if c["summary"]]
    compactions = [e for e in log.events() if isinstance(e, CompactionEvent)]
    return {"sizes": sizes, "summaries": summary_sizes, "compactions": compactions, "status": ", ".join(sorted(statuses)),
            "critical": harness.context.critical_tokens, "seconds": elapsed}


# ── prompt cache over the real Anthropic provider ───────────────────────────


def cache_run(steps: int, workspace: str, fetch, budget: int, strategy: str) -> dict:
    from mock_servers import Count, MockAnthropic, Reply, ToolUse
    from prompt_cache import PromptCache
    from prompt_cache import _blocks as prompt_blocks

    from jupyter_brain.providers.anthropic import AnthropicProvider

    server = MockAnthropic()
    server.prompt_cache = PromptCache(COUNTER.count_text)
    state = {"step": 0}

    def answer(path: str, body: dict):
        if path.endswith("/count_tokens"):  # the harness confirms its estimate before compacting
            return Count(sum(COUNTER.count_text(text) for text, _ in prompt_blocks(body)))
        if not path.endswith("/v1/messages"):
            return None
        system = " ".join(b.get("text", "") for b in body.get("system") or [])
        if SUMMARY_INSTRUCTION[:40] in system:
            return Reply(text="Earlier: the user asked which month's revenue dropped most; parts were fetched.")
        i = state["step"]
        state["step"] += 1
        if i < steps:
            return Reply(text=f"Fetching part {i}.", tool_calls=[ToolUse("fetch_rows", {"part": i}, id=f"toolu_{i:03d}")])
        return Reply(text="Revenue dropped most in March.")

    server.auto = answer
    with server:
        provider = AnthropicProvider(api_key="sk-bench", base_url=server.url, max_retries=0)
        harness = AgentHarness(
            provider, AgentToolRegistry([fetch]), None, max_steps=steps + 1, timeout_s=600,
            workspace=lambda: workspace, context_budget=budget, compaction=strategy, token_counter=TokenCounter(),
        )
        compactions: list = []
        result = harness.run_turn("bench", [], question(0),
                                  on_event=lambda e: compactions.append(e) if isinstance(e, CompactionEvent) else None)
    return {"status": result.status, "steps": list(result.steps), "compactions": len(compactions)}


def share(read: int, total: int) -> str:
    return f"{read / total:.1%}" if total else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--workspace-tokens", type=int, default=5_000)
    parser.add_argument("--result-tokens", type=int, default=300)
    parser.add_argument("--budget", type=int, default=16_000, help="context budget of the agent (tokens)")
    parser.add_argument("--turns", type=int, default=5, help="the second scenario splits the steps over this many cells")
    parser.add_argument("--no-cache", action="store_true", help="skip the prompt-cache run")
    args = parser.parse_args()

    workspace = "<workspace>\n" + text_of_tokens(args.workspace_tokens - 4, "var") + "\n</workspace>"
    fetch = make_tool(args.result_tokens)
    schemas = AgentToolRegistry([fetch]).schemas()
    print(f"scenario: {args.steps} tool steps, workspace {COUNTER.count_text(workspace):,} tokens, "
          f"tool result {COUNTER.count_text(fetch.fn(part=0)):,} tokens, budget {args.budget:,} tokens "
          f"(tokenizer: tiktoken cl100k)\n")

    for turns in (1, args.turns):
        title = "one cell" if turns == 1 else f"{turns} cells (turns)"
        print(f"── {args.steps} steps in {title} ──")
        context_table(args, workspace, fetch, schemas, turns)
        print()
    print(f"per-request sizes in tokens; 'over budget' counts requests above {args.budget:,}; compaction "
          f"starts at the critical level ({int(args.budget * 0.85):,}) and brings the history to 60% of the budget.")
    if not args.no_cache:
        cache_table(args, workspace, fetch)


def context_table(args, workspace, fetch, schemas, turns: int) -> None:
    base = naive(args.steps, workspace, fetch, schemas, turns)
    naive_total = sum(base)
    print(f"{'run':<24}{'requests':>9}{'total input':>14}{'vs naive':>10}{'max/request':>13}"
          f"{'over budget':>13}{'compactions':>13}{'after 1st: min–max':>22}")
    print(f"{'(a) naive loop':<24}{len(base):>9}{naive_total:>14,}{'1/1':>10}{max(base):>13,}"
          f"{sum(s > args.budget for s in base):>13}{'-':>13}{'-':>22}")
    runs = [("(b) no compaction", None), *((f"(b) {name}", name) for name in STRATEGIES)]
    for label, strategy in runs:
        r = ours(args.steps, workspace, fetch, args.budget, strategy, turns)
        sizes = r["sizes"]
        total = sum(sizes) + sum(r["summaries"])
        first = _first_compacted_request(r) if r["compactions"] else None
        after = sizes[first:] if first is not None else []
        flat = f"{min(after):,}–{max(after):,}" if after else "-"
        print(f"{label:<24}{len(sizes):>9}{total:>14,}{f'1/{naive_total / total:.1f}':>10}{max(sizes):>13,}"
              f"{sum(s > args.budget for s in sizes):>13}{len(r['compactions']):>13}{flat:>22}")
        if r["summaries"]:
            print(f"{'':<24}  incl. {len(r['summaries'])} summary call(s), {sum(r['summaries']):,} tokens")
        if r["status"] != "completed":
            print(f"{'':<24}  turn status: {r['status']}")


def _first_compacted_request(r: dict) -> int:
    """Index (in main requests) of the first request sent after a compaction."""
    sizes = r["sizes"]
    return next((i for i in range(1, len(sizes)) if sizes[i] < sizes[i - 1] - 1_000), len(sizes))


def cache_table(args, workspace, fetch) -> None:
    print("\nprompt cache (Anthropic provider → mock Messages API with its cache model):")
    print(f"{'strategy':<16}{'requests':>9}{'compactions':>13}{'input':>8}{'cache read':>12}{'cache write':>13}"
          f"{'read share':>12}{'steady':>9}{'median step':>13}")
    for name in STRATEGIES:
        r = cache_run(args.steps, workspace, fetch, args.budget, name)
        steps = r["steps"]
        totals = [s.input_tokens + s.cache_read_tokens + s.cache_creation_tokens for s in steps]
        read = sum(s.cache_read_tokens for s in steps)
        steady = steps[1:]
        steady_total = sum(t for t in totals[1:])
        shares = [s.cache_read_tokens / t for s, t in zip(steps, totals, strict=True) if t]
        print(f"{name:<16}{len(steps):>9}{r['compactions']:>13}{sum(s.input_tokens for s in steps):>8,}{read:>12,}"
              f"{sum(s.cache_creation_tokens for s in steps):>13,}{share(read, sum(totals)):>12}"
              f"{share(sum(s.cache_read_tokens for s in steady), steady_total):>9}"
              f"{statistics.median(shares):>13.1%}")
        if r["status"] != "completed":
            print(f"  turn status: {r['status']}")
    print("\n'steady' leaves out the first request (nothing can be cached yet); summary calls are not cached "
          "and not counted here.")


if __name__ == "__main__":
    main()
