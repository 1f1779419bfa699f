import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { renderMarkdown } from "../src/markdown";
import type { AgentEvent } from "../src/protocol";
import { AgentRenderer } from "../src/renderer";
import { scriptedTurn } from "./fixtures";

const start: AgentEvent = {
  type: "turn_start",
  session_id: "s",
  user_message: "go",
  provider: "scripted",
  model: "m",
  think_level: "high",
  strategy: "react",
  max_steps: 4,
  ts: 100,
};

function make(opts: ConstructorParameters<typeof AgentRenderer>[1] = {}) {
  const host = document.createElement("div");
  const r = new AgentRenderer(host, opts);
  return { host, r, q: (sel: string) => host.querySelector(sel) as HTMLElement | null, all: (sel: string) => [...host.querySelectorAll(sel)] as HTMLElement[] };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("thinking", () => {
  it("is open while streaming and collapses on ThinkingEnd, expandable again", () => {
    const { r, q } = make();
    r.append([start, { type: "step_start", step: 1 }]);
    r.append([{ type: "thinking_delta", step: 1, text: "let me " }, { type: "thinking_delta", step: 1, text: "think" }]);
    const details = q("details.jb-thinking") as HTMLDetailsElement;
    expect(details.open).toBe(true);
    expect(details.classList.contains("jb-streaming")).toBe(true);
    expect(q(".jb-thinking-text")?.textContent).toBe("let me think");
    r.append([{ type: "thinking_end", step: 1 }]);
    expect(details.open).toBe(false);
    expect(details.classList.contains("jb-streaming")).toBe(false);
    expect(q(".jb-thinking-summary")?.textContent).toBe("Thought · 3 words");
    (q(".jb-thinking-summary") as HTMLElement).click();
    expect(details.open).toBe(true);
  });

  it("starts a new block for thinking after ThinkingEnd", () => {
    const { r, all } = make();
    r.append([start, { type: "thinking_delta", step: 1, text: "a" }, { type: "thinking_end", step: 1 }, { type: "thinking_delta", step: 1, text: "b" }]);
    const blocks = all("details.jb-thinking") as HTMLDetailsElement[];
    expect(blocks.map((b) => b.open)).toEqual([false, true]);
  });
});

describe("tool timeline", () => {
  it("groups rows by wave, in wave order, with status, duration, arguments and results", () => {
    const { host, r, all, q } = make();
    r.append(scriptedTurn());
    const waves = all(".jb-wave");
    expect(waves.map((w) => w.dataset.wave)).toEqual(["1", "2"]);
    const rowsOf = (w: HTMLElement) => [...w.querySelectorAll(".jb-tool")].map((el) => (el as HTMLElement).dataset.callId);
    expect(rowsOf(waves[0])).toEqual(["c1", "c2"]);
    expect(rowsOf(waves[1])).toEqual(["c3"]);
    expect(waves[0].querySelector(".jb-wave-label")?.textContent).toBe("wave 1 · 2 in parallel");
    expect(waves[1].querySelector(".jb-wave-label")?.textContent).toBe("wave 2");

    const c1 = host.querySelector('[data-call-id="c1"]') as HTMLElement;
    expect(c1.classList.contains("jb-tool-ok")).toBe(true);
    expect(c1.querySelector(".jb-tool-icon")?.textContent).toBe("✓");
    expect(c1.querySelector(".jb-tool-meta")?.textContent).toBe("1.2 s");
    // #13: code as highlighted Python, the result shown (clipped when long), not folded away
    expect(c1.querySelector(".jb-tool-args code.language-python")?.textContent).toBe("df.head()");
    expect(c1.querySelector(".jb-tool-result pre")?.textContent).toBe("   a  b\n0  1  2");

    const c3 = q('[data-call-id="c3"]')!;
    expect(c3.classList.contains("jb-tool-error")).toBe(true);
    expect(c3.classList.contains("jb-tool-repaired")).toBe(true);
    expect(c3.querySelector(".jb-tool-meta")?.textContent).toBe("error · 3 ms");
    expect(c3.querySelector("pre.jb-tool-error")?.textContent).toBe("FileNotFoundError: a.csv");
    expect([...c3.querySelectorAll(".jb-tool-args dt, .jb-tool-args dd")].map((e) => e.textContent)).toEqual(["path", "a.csv"]);
    expect(all(".jb-tools")).toHaveLength(1);
  });

  it("shows streamed argument text until the full arguments arrive, and a running state", () => {
    const { r, q } = make();
    r.append([start, { type: "tool_call_start", step: 1, call_id: "x", name: "python" }]);
    r.append([{ type: "tool_call_args_delta", step: 1, call_id: "x", delta: '{"co' }]);
    expect(q(".jb-tool")?.classList.contains("jb-tool-running")).toBe(true);
    expect(q(".jb-tool-args")?.textContent).toBe('{"co');
    expect(q(".jb-wave-pending .jb-tool")).not.toBeNull();
    r.append([{ type: "tool_call_args", step: 1, call_id: "x", name: "python", arguments: { code: "1" }, wave: 0 }]);
    expect(q('.jb-wave[data-wave="0"] .jb-tool')).not.toBeNull();
    expect(q(".jb-tool-args code.language-python")?.textContent).toBe("1");
  });

  it("marks a call the provider's server ran, and leaves our own calls unmarked", () => {
    const { r, q } = make();
    r.append([
      start,
      { type: "tool_call_start", step: 1, call_id: "srvtoolu_1", name: "tool_search_tool_bm25", by_server: true },
      { type: "tool_call_args", step: 1, call_id: "srvtoolu_1", name: "tool_search_tool_bm25", arguments: { query: "weather" } },
      { type: "tool_call_end", step: 1, call_id: "srvtoolu_1", name: "tool_search_tool_bm25", status: "ok",
        result_preview: "run by the provider's server (anthropic): found 1 tool: get_weather" },
      { type: "tool_call_start", step: 1, call_id: "toolu_2", name: "get_weather" },
    ]);
    const server = q('.jb-tool[data-call-id="srvtoolu_1"]');
    expect(server?.classList.contains("jb-tool-server")).toBe(true);
    expect(server?.querySelector(".jb-tool-by-server")?.textContent).toBe("server");
    expect(server?.textContent).toContain("found 1 tool: get_weather");
    const ours = q('.jb-tool[data-call-id="toolu_2"]');
    expect(ours?.classList.contains("jb-tool-server")).toBe(false);
    expect(ours?.querySelector(".jb-tool-by-server")).toBeNull();
  });

  it("shows the artifact handle of a large output", () => {
    const { r, q } = make();
    r.append([
      start,
      { type: "tool_call_end", step: 1, call_id: "z", name: "python", status: "timeout", duration_ms: 45000, artifact: "art-123" },
    ]);
    expect(q(".jb-tool-artifact code")?.textContent).toBe("art-123");
    expect(q(".jb-tool-icon")?.textContent).toBe("◷");
  });
});

describe("cards", () => {
  it("renders a reflection card with text, confidence and trigger, and a muted stub when skipped", () => {
    const { all } = (() => {
      const m = make();
      m.r.append(scriptedTurn());
      return m;
    })();
    const [card, stub] = all(".jb-reflection");
    expect(card.dataset.trigger).toBe("tool_error");
    expect(card.querySelector(".jb-chip-trigger")?.textContent).toBe("after a tool error");
    expect(card.querySelector(".jb-confidence")?.textContent).toBe("confidence 80%");
    expect(card.querySelector(".jb-card-body code")?.textContent).toBe("df");
    expect(card.querySelector(".jb-card-note")?.textContent).toBe("Suggested: plot df");
    expect(stub.classList.contains("jb-skipped")).toBe(true);
    expect(stub.textContent).toBe("Reflection skipped (periodic): [budget exhausted]");
  });

  it("renders strategy chips per kind", () => {
    const { r, all } = make();
    const kinds = [
      { kind: "thought", text: "t" },
      { kind: "action", tool: "python", args: { code: "1" } },
      { kind: "observation", text: "o" },
      { kind: "reflection", critique: "c", revised_plan: "p" },
      { kind: "branch", branch_id: 2, thought: "b", score: 0.75, selected: true },
      { kind: "final_answer", text: "done" },
    ];
    r.append([start, ...kinds.map((data): AgentEvent => ({ type: "strategy_step", step: 1, strategy: "react", data }))]);
    expect(all(".jb-strategy")).toHaveLength(1);
    // #13: rows of chip + Markdown; a Tree-of-Thoughts branch goes to the shared tree.
    expect(all(".jb-sstep .jb-chip").map((c) => c.textContent)).toEqual([
      "Thought",
      "Action",
      "Observation",
      "Reflection",
      "Final answer",
    ]);
    expect(all(".jb-sstep-text").map((c) => c.textContent?.trim())).toEqual(["t", "python", "o", "c", "done"]);
    expect(all(".jb-sstep-plan").map((c) => c.textContent?.trim())).toEqual(["p"]);
    expect(all(".jb-strategy .jb-tot .jb-tot-candidate").map((c) => c.dataset.state)).toEqual(["selected"]);
  });

  it("renders error cards and the compaction marker", () => {
    const { r, all, q } = make();
    r.append(scriptedTurn());
    r.append([{ type: "error", step: 0, kind: "provider", message: "boom", recoverable: false }]);
    const [soft, fatal] = all(".jb-error");
    expect(soft.querySelector(".jb-error-kind")?.textContent).toBe("rate_limit");
    expect(soft.querySelector(".jb-error-message")?.textContent).toBe("429 Too Many Requests, retrying");
    expect(soft.querySelector(".jb-card-note")?.textContent).toBe("The agent continues.");
    expect(fatal.classList.contains("jb-fatal")).toBe(true);
    expect(fatal.getAttribute("role")).toBe("alert");
    expect(q(".jb-compaction")?.textContent).toBe("History compacted (summarize): 12,000 → 3,000 tokens");
    r.append([
      {
        type: "compaction", step: 2, strategy: "token_budget", tokens_before: 9000, tokens_after: 4000,
        messages_before: 30, messages_after: 12, budget_tokens: 10000, fallback: "summary failed: timeout",
      },
    ]);
    expect(all(".jb-compaction")[1].textContent).toBe(
      "History compacted (token_budget): 9,000 → 4,000 tokens of a 10,000 budget · 30 → 12 messages · summary failed: timeout",
    );
  });
});

describe("the user's message", () => {
  it("shows as the Markdown it was written in, sanitized like the answer", () => {
    const { r, q } = make();
    r.append([{ ...start, user_message: "Which month dropped most in `sales`? <img src=x onerror=\"window.__pwned=1\">" }]);
    expect(q(".jb-user-text code")?.textContent).toBe("sales");
    expect(q(".jb-user-text img")?.getAttribute("onerror")).toBeNull();
    expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined();
  });
});

describe("header, footer and turn end", () => {
  it("names the chain member that answered after a fallback, and the next turn's own", () => {
    const { r, q } = make();
    r.append([
      start,
      { type: "step_start", step: 1, ts: 100.1 },
      { type: "provider_fallback", step: 1, failed: "scripted:m", next: "ollama:qwen3:4b", kind: "overloaded", message: "Overloaded", ts: 100.2 },
    ]);
    expect(q(".jb-h-model")?.textContent).toBe("ollama / qwen3:4b");
    expect(q(".jb-h-model")?.title).toBe("scripted:m failed (overloaded); ollama:qwen3:4b answered");
    r.append([{ ...start, ts: 200 }]);
    expect(q(".jb-h-model")?.textContent).toBe("scripted / m");
    expect(q(".jb-h-model")?.title).toBe("");
  });

  it("shows model, levels, session, step counter and status", () => {
    const { r, q } = make();
    r.append([start, { type: "step_start", step: 2, ts: 101.5 }]);
    expect(q(".jb-h-model")?.textContent).toBe("scripted / m");
    expect(q(".jb-h-think")?.textContent).toBe("think high");
    expect(q(".jb-h-strategy")?.textContent).toBe("react");
    expect(q(".jb-h-session")?.textContent).toBe("session s");
    expect(q(".jb-h-step")?.textContent).toBe("step 2 / 4");
    expect(q(".jb-h-elapsed")?.textContent).toBe("1.5 s");
    expect(q(".jb-badge")?.className).toContain("jb-status-running");
  });

  it("keeps the elapsed time ticking between events", () => {
    let now = 0;
    const { r, q } = make({ now: () => now });
    r.append([start]);
    now = 2500;
    vi.advanceTimersByTime(1000);
    expect(q(".jb-h-elapsed")?.textContent).toBe("2.5 s");
  });

  for (const [status, label] of [
    ["interrupted", "interrupted"],
    ["timeout", "stopped: time limit reached"],
    ["max_steps", "stopped: step limit reached"],
    ["error", "failed: provider error"],
  ] as const) {
    it(`shows a clear ${status} end`, () => {
      const { r, q } = make();
      r.append([start, { type: "turn_end", status, text: "", steps: 3, duration_ms: 61000 }]);
      const banner = q(".jb-turn-end")!;
      expect(banner.classList.contains(`jb-status-${status}`)).toBe(true);
      expect(banner.getAttribute("role")).toBe("alert");
      expect(banner.querySelector(".jb-turn-end-label")?.textContent).toBe(label);
      expect(banner.querySelector(".jb-turn-end-detail")?.textContent).toBe("3 steps · 1 min 01 s");
      expect(q(".jb-badge")?.className).toContain(`jb-status-${status}`);
      expect(q(".jb-h-elapsed")?.textContent).toBe("1 min 01 s");
    });
  }

  it("totals usage in the footer, the turn's figures winning at the end", () => {
    const { r, q, all } = make();
    const turn = scriptedTurn();
    r.append(turn.slice(0, -1));
    const values = () => all(".jb-f-value").map((v) => v.textContent);
    expect(values()).toEqual(["2,200", "80", "800", "100", "$0.0220"]);
    r.append(turn.slice(-1));
    expect(values()).toEqual(["2,200", "80", "800", "100", "$0.0220"]);
    expect(q(".jb-turn-end")?.getAttribute("role")).toBe("status");
  });

  it("shows the final text of a turn that streamed none", () => {
    const { r, q } = make();
    r.append([start, { type: "turn_end", status: "completed", text: "**42**" }]);
    expect(q(".jb-final strong")?.textContent).toBe("42");
  });
});

describe("incremental rendering", () => {
  it("grows one text node for 1,000 deltas and renders Markdown at most once per throttle window", () => {
    const markdown = vi.fn(renderMarkdown);
    const { r, q } = make({ markdown, throttleMs: 50 });
    r.append([start, { type: "step_start", step: 1 }]);
    markdown.mockClear(); // the user's message, rendered once at the turn's start
    r.append([{ type: "text_delta", step: 1, text: "w0 " }]);
    const block = q(".jb-text")!;
    const textNodes = () => {
      const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
      const nodes: Node[] = [];
      while (walker.nextNode()) nodes.push(walker.currentNode);
      return nodes;
    };
    const [tail] = textNodes();
    const appendData = vi.spyOn(tail as Text, "appendData");
    for (let i = 1; i < 1000; i++) r.append([{ type: "text_delta", step: 1, text: `w${i} ` }]);
    expect(markdown).not.toHaveBeenCalled();
    expect(textNodes()).toEqual([tail]);
    expect(appendData).toHaveBeenCalledTimes(999);
    expect((tail as Text).data.split(" ").length).toBe(1001);
    vi.advanceTimersByTime(50);
    expect(markdown).toHaveBeenCalledTimes(1);
    expect(q(".jb-text")).toBe(block);
    expect(block.querySelector("p")?.textContent?.startsWith("w0 w1 w2")).toBe(true);
    expect((tail as Text).data).toBe("");
    // Later deltas continue in the last paragraph until the next render.
    r.append([{ type: "text_delta", step: 1, text: "more" }]);
    expect(block.querySelector("p")?.lastChild).toBe(tail);
    r.append([{ type: "step_end", step: 1 }]);
    expect(markdown).toHaveBeenCalledTimes(2);
    expect(tail.parentNode).toBeNull();
    expect(block.textContent?.trim().endsWith("w999 more")).toBe(true);
  });

  it("re-renders only the streaming block, never earlier ones", () => {
    const markdown = vi.fn(renderMarkdown);
    const { r, all } = make({ markdown });
    r.append([start, { type: "text_delta", step: 1, text: "first" }, { type: "step_end", step: 1 }]);
    const first = all(".jb-text")[0];
    const firstHtml = first.innerHTML;
    const calls = markdown.mock.calls.length;
    for (let i = 0; i < 200; i++) {
      r.append([{ type: "text_delta", step: 2, text: `x${i} ` }]);
      vi.advanceTimersByTime(20);
    }
    expect(all(".jb-text")[0]).toBe(first);
    expect(first.innerHTML).toBe(firstHtml);
    expect(markdown.mock.calls.slice(calls).every(([src]) => src.startsWith("x0"))).toBe(true);
    expect(markdown.mock.calls.length - calls).toBeLessThanOrEqual(200 * 20 / 50 + 1);
  });

  it("keeps existing nodes when events are appended", () => {
    const { r, q } = make();
    const turn = scriptedTurn();
    r.append(turn.slice(0, 10));
    const step1 = q('.jb-step[data-step="1"]');
    const header = q(".jb-header");
    r.append(turn.slice(10));
    expect(q('.jb-step[data-step="1"]')).toBe(step1);
    expect(q(".jb-header")).toBe(header);
  });
});

describe("approval card", () => {
  const request: AgentEvent = {
    type: "approval_request",
    step: 1,
    call_id: "c1",
    name: "write_file",
    effect: "write",
    arguments: { path: "notes.md", content: "<img src=x onerror=alert(1)>" },
    preview: { path: "notes.md", diff: "--- a/notes.md\n+++ b/notes.md\n@@ -1 +1 @@\n-old\n+<img src=x onerror=alert(1)>\n", summary: "+1 −1" },
    timeout_s: 300,
  };

  it("shows the diff as text, sends the click once and shows the decision", () => {
    const sent: unknown[] = [];
    const { r, q, all } = make({ send: (m) => sent.push(m) });
    r.append([start, { type: "step_start", step: 1 }, request]);
    const card = q(".jb-approval") as HTMLElement;
    expect(card.classList.contains("jb-pending")).toBe(true);
    expect(q('.jb-tool[data-call-id="c1"] .jb-approval')).toBe(card); // in the row of its call
    expect(q(".jb-tool-meta")?.textContent).toBe("waiting for approval…");
    expect(q(".jb-approval-tool")?.textContent).toBe("write_file");
    expect(q(".jb-approval-path")?.textContent).toBe("notes.md (+1 −1)");
    expect(all(".jb-diff-add").map((e) => e.textContent)).toEqual(["+<img src=x onerror=alert(1)>\n"]);
    expect(all(".jb-diff-del").map((e) => e.textContent)).toEqual(["-old\n"]);
    expect(card.querySelector("img")).toBeNull();
    expect(q(".jb-approval-status")?.textContent).toContain("counts as denied after 300 s");
    (q(".jb-approve") as HTMLButtonElement).click();
    (q(".jb-deny") as HTMLButtonElement).click(); // disabled after the first click
    expect(sent).toEqual([{ kind: "approval", call_id: "c1", approved: true }]);
    expect(q(".jb-approval-status")?.textContent).toBe("Approving…");
    r.append([{ type: "approval_decision", step: 1, call_id: "c1", approved: true, by: "user", channel: "widget" }]);
    expect(card.classList.contains("jb-approved")).toBe(true);
    expect(q(".jb-approval-actions")).toBeNull();
    expect(q(".jb-approval-status")?.textContent).toBe("✓ Approved in the widget (by you)");
    expect(q(".jb-approval .jb-card-title")?.textContent).toBe("Approved");
    expect(q(".jb-tool-meta")?.textContent).toBe("running…");
  });

  it("shows a timeout as a denial and arguments when there is no diff", () => {
    const { r, q } = make({ send: () => undefined });
    r.append([
      start,
      { type: "approval_request", step: 1, call_id: "c2", name: "run_python", effect: "execute", arguments: { code: "1+1" }, timeout_s: 5 },
      { type: "approval_decision", step: 1, call_id: "c2", approved: false, by: "timeout", channel: "widget" },
    ]);
    expect(q(".jb-approval-args code.language-python")?.textContent).toBe("1+1"); // #13: code as code
    expect(q(".jb-approval")?.classList.contains("jb-denied")).toBe(true);
    expect(q(".jb-approval-status")?.textContent).toBe("✗ Denied (no answer before the approval timeout)");
  });

  it("hides the buttons where no kernel listens", () => {
    const { r, q } = make();
    r.append([start, request]);
    expect((q(".jb-approval-actions") as HTMLElement).hidden).toBe(true);
  });
});

describe("context markers", () => {
  it("shows a context warning and the turn-ending error wording", () => {
    const { r, q } = make();
    r.append([
      start,
      { type: "context_warning", step: 1, level: "warning", previous: "ok", tokens: 150000, window: 200000 },
      { type: "error", step: 1, kind: "server", message: "boom", recoverable: false },
    ]);
    expect(q(".jb-context-warning")?.textContent).toBe("Context warning: 150,000 tokens (75% of 200,000)");
    expect(q(".jb-error .jb-card-note")?.textContent).toContain("ready for the next cell");
  });
});

describe("budget caps", () => {
  it("pins the 80 % warning and labels a turn stopped by a cap", () => {
    const { r, q } = make();
    r.append([
      start,
      {
        type: "budget_warning", step: 2, scope: "turn", unit: "usd", spent: 0.085, cap: 0.105,
        message: "81% of this turn's cost cap used: $0.0850 of $0.1050",
      },
      {
        type: "turn_end", status: "budget", steps: 1, duration_ms: 10,
        text: "[Budget: stopped before the next model call, which could cross this turn's cost cap: …]",
      },
    ]);
    expect(q(".jb-budget-warning")?.textContent).toBe("⚠ Budget: 81% of this turn's cost cap used: $0.0850 of $0.1050");
    expect(q(".jb-turn-end-label")?.textContent).toBe("stopped: budget cap reached");
    expect(q(".jb-stopped")?.textContent).toContain("Budget: stopped before the next model call");
  });
});
