// #13 in the AgentView: the answer first and once, the process folding under one summary
// line, strategy rows instead of the text they came from, tools by kind, rich outputs in
// the tool row, the context events, and everything model-written kept inert.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { argsKind, lineDiff, partialJsonString } from "../src/parts/args";
import { preamble } from "../src/parts/strategy";
import type { AgentEvent } from "../src/protocol";
import { AgentRenderer, type RendererOptions, SYNC_EVENTS } from "../src/renderer";

const start: AgentEvent = { type: "turn_start", session_id: "s", user_message: "Which month?", provider: "p", model: "m", ts: 1 };

function make(opts: RendererOptions = {}) {
  const host = document.createElement("div");
  const r = new AgentRenderer(host, { throttleMs: 0, ...opts });
  return {
    host,
    r,
    q: (s: string) => host.querySelector(s) as HTMLElement | null,
    all: (s: string) => [...host.querySelectorAll(s)] as HTMLElement[],
  };
}

const count = (hay: string, needle: string) => hay.split(needle).length - 1;

/** A quickstart-like turn: a run_python call with a plot and a table, then the answer. */
function quickstart(answer = "**March** fell the most (-45)."): AgentEvent[] {
  const code = "import matplotlib.pyplot as plt\nrevenue = sales.set_index(\"month\")\nrevenue.plot()\nrevenue";
  return [
    start,
    { type: "step_start", step: 1 },
    { type: "text_delta", step: 1, text: "Let me plot it." },
    { type: "tool_call_start", step: 1, call_id: "c1", name: "run_python" },
    { type: "tool_call_args_delta", step: 1, call_id: "c1", delta: JSON.stringify({ code }).slice(0, 50) },
    { type: "tool_call_args", step: 1, call_id: "c1", name: "run_python", arguments: { code }, wave: 0 },
    {
      type: "tool_call_end", step: 1, call_id: "c1", name: "run_python", status: "ok", duration_ms: 120,
      result_preview: "[created 1 figure]\nOut:    revenue\nJan 120", images: ["data:image/png;base64,iVBORw0KGgo="],
      outputs: [{ mime_type: "text/html", data: "<table><tr><th>revenue</th></tr><tr><td>120</td></tr></table>", role: "value" }],
    },
    { type: "step_end", step: 1 },
    { type: "step_start", step: 2 },
    ...answer.split(" ").map((w, i, a): AgentEvent => ({ type: "text_delta", step: 2, text: i < a.length - 1 ? `${w} ` : w })),
    { type: "step_end", step: 2 },
    { type: "turn_end", status: "completed", text: "", steps: 2, tool_calls: 1, reflections: 1, duration_ms: 12400, cost_usd: 0.0123 },
  ];
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("answer first, process folded", () => {
  it("streams the process open, then shows the answer on top, once, and folds the steps", () => {
    const { r, q, host } = make();
    const events = quickstart();
    r.append(events.slice(0, -1));
    const process = q("details.jb-process") as HTMLDetailsElement;
    expect(process.open).toBe(true);
    expect(q(".jb-answer")?.hidden).toBe(true);
    expect(q(".jb-process-summary")?.textContent).toBe("Working… step 2 · 1 tool");
    r.append(events.slice(-1));
    expect(process.open).toBe(false);
    const answer = q(".jb-answer")!;
    expect(answer.hidden).toBe(false);
    expect(answer.querySelector("strong")?.textContent).toBe("March");
    // Above the process, and nowhere else.
    expect(answer.compareDocumentPosition(process) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(count(host.textContent ?? "", "fell the most")).toBe(1);
    expect(q('.jb-step[data-step="2"]')?.hidden).toBe(true); // nothing left in the answer's step
    expect(q(".jb-process-summary")?.textContent).toBe("✓2 steps · 1 tool · 1 reflection · 12.4 s · $0.0123");
    expect(q(".jb-turn-end")?.getAttribute("role")).toBe("status");
    // A native <details>: a click on its summary opens it (and Enter/Space do the same natively).
    (q(".jb-process-summary") as HTMLElement).click();
    expect(process.open).toBe(true);
  });

  it("keeps the steps open with fold: never", () => {
    const { r, q } = make({ fold: "never" });
    r.append(quickstart());
    expect((q("details.jb-process") as HTMLDetailsElement).open).toBe(true);
    expect(q(".jb-answer strong")?.textContent).toBe("March");
  });

  it("leaves a stopped turn open and says why, once", () => {
    const { r, q, host } = make();
    r.append([start, { type: "step_start", step: 1 }, { type: "turn_end", status: "max_steps", text: "[I stopped after 1 steps.]", steps: 1 }]);
    expect((q("details.jb-process") as HTMLDetailsElement).open).toBe(true);
    expect(q(".jb-answer .jb-stopped")?.textContent?.trim()).toBe("[I stopped after 1 steps.]");
    expect(count(host.textContent ?? "", "I stopped")).toBe(1);
  });

  it("shows a failed turn's error once: the card, not the stop message again", () => {
    const { r, q, host, all } = make();
    r.append([
      start,
      { type: "step_start", step: 1 },
      { type: "error", step: 1, kind: "auth", message: "invalid x-api-key", recoverable: false },
      { type: "turn_end", status: "error", text: "[The turn stopped because of an error: invalid x-api-key. The history is kept.]", steps: 1 },
    ]);
    expect(count(host.textContent ?? "", "invalid x-api-key")).toBe(1);
    expect(all(".jb-error")).toHaveLength(1);
    // Outside the process: errors never fold away.
    expect(q(".jb-pinned .jb-error")).not.toBeNull();
    expect(q(".jb-process .jb-error")).toBeNull();
    expect(q(".jb-answer")?.hidden).toBe(true);
  });

  it("keeps approval cards in sight when the steps fold", () => {
    const { r, q } = make();
    r.append([
      start,
      { type: "step_start", step: 1 },
      { type: "approval_request", step: 1, call_id: "w", name: "write_file", effect: "write", arguments: { path: "a.md", content: "hi" } },
      { type: "approval_decision", step: 1, call_id: "w", approved: true },
      { type: "tool_call_end", step: 1, call_id: "w", name: "write_file", status: "ok" },
      { type: "step_start", step: 2 },
      { type: "text_delta", step: 2, text: "Done." },
      { type: "turn_end", status: "completed", text: "", steps: 2 },
    ]);
    expect(q(".jb-pinned .jb-approval.jb-approved")).not.toBeNull();
    expect(q(".jb-process .jb-approval")).toBeNull();
  });

  it("renders the final text of a non-streamed turn without its appended Sources section", () => {
    const { r, q, host } = make();
    r.append([
      start,
      { type: "citations", step: 1, local: ["data/sales.csv:3"], web: [] },
      { type: "turn_end", status: "completed", text: "**42**\n\n**Sources**\n\n- `data/sales.csv:3`" },
    ]);
    expect(q(".jb-answer strong")?.textContent).toBe("42");
    expect(count(host.textContent ?? "", "data/sales.csv:3")).toBe(1);
    expect(q(".jb-answer-sources .jb-anchor")?.textContent).toBe("data/sales.csv:3");
  });
});

describe("strategy steps once", () => {
  const react = "Thought: I need the **drop**.\nFinal Answer: **March** fell the most.";
  it("replaces the labelled text by rows and puts the Final Answer first", () => {
    const { r, q, all, host } = make();
    r.append([
      { ...start, strategy: "react" },
      { type: "step_start", step: 1 },
      { type: "text_delta", step: 1, text: react.slice(0, 30) },
      { type: "strategy_step", step: 1, strategy: "react", data: { kind: "thought", text: "I need the **drop**." } },
      { type: "text_delta", step: 1, text: react.slice(30) },
      { type: "strategy_step", step: 1, strategy: "react", data: { kind: "final_answer", text: "**March** fell the most." } },
      { type: "step_end", step: 1 },
      { type: "turn_end", status: "completed", text: "", steps: 1 },
    ]);
    const text = host.textContent ?? "";
    expect(text).not.toContain("**");
    expect(text).not.toContain("Thought:");
    expect(count(text, "fell the most")).toBe(1);
    expect(q(".jb-answer strong")?.textContent).toBe("March");
    expect(all(".jb-sstep .jb-chip").map((c) => c.textContent)).toEqual(["Thought"]);
    expect(q(".jb-sstep strong")?.textContent).toBe("drop");
    expect(all(".jb-process .jb-text")).toHaveLength(0);
  });

  it("keeps the text while it streams, and what precedes the first label", () => {
    const { r, all, q } = make();
    r.append([
      start,
      { type: "step_start", step: 1 },
      { type: "text_delta", step: 1, text: "Let me see.\nThought: first\nAction: run_python\n" },
      { type: "strategy_step", step: 1, strategy: "react", data: { kind: "thought", text: "first" } },
    ]);
    expect(all(".jb-text")).toHaveLength(1); // still streaming: shown as it comes
    r.append([
      { type: "tool_call_start", step: 1, call_id: "c", name: "run_python" },
      { type: "strategy_step", step: 1, strategy: "react", data: { kind: "action", tool: "run_python", args: { code: "1" } } },
    ]);
    expect(all(".jb-text")).toHaveLength(0);
    expect(q(".jb-kind-preamble")?.textContent?.trim()).toBe("Let me see.");
    expect(all(".jb-sstep .jb-chip").map((c) => c.textContent)).toEqual(["Thought", "Action"]);
    expect(q(".jb-sstep-tool")?.textContent).toBe("run_python");
  });

  it("finds the preamble before labels, decorated or not", () => {
    expect(preamble("Sure.\n**Thought:** x")).toBe("Sure.");
    expect(preamble("=== Decision Point 1 ===\nCandidate 1: a → Score: 0.8")).toBe("");
    expect(preamble("Thought: x")).toBe("");
  });
});

describe("tools by kind", () => {
  it("shows run_python code as highlighted Python, with no JSON or escapes, live and final", () => {
    const { r, q, host } = make();
    const events = quickstart();
    r.append(events.slice(0, 5));
    const live = q('[data-call-id="c1"] .jb-tool-args')!;
    expect(live.textContent).toBe("import matplotlib.pyplot as plt\nrevenue ");
    r.append(events.slice(5));
    const code = q('[data-call-id="c1"] pre.jb-code code.hljs.language-python')!;
    expect(code.textContent).toContain('revenue = sales.set_index("month")\nrevenue.plot()');
    expect(code.querySelector(".hljs-keyword")?.textContent).toBe("import");
    const shown = q('[data-call-id="c1"]')!.textContent ?? "";
    expect(shown).not.toContain("\\n");
    expect(shown).not.toContain('{"code"');
    expect(host.querySelectorAll("script")).toHaveLength(0);
  });

  it("shows the figure and the DataFrame table inside the tool row, the repr text not again", () => {
    const { r, q } = make();
    r.append(quickstart());
    const row = q('[data-call-id="c1"]')!;
    expect(row.querySelector("img.jb-tool-image")?.getAttribute("src")).toBe("data:image/png;base64,iVBORw0KGgo=");
    expect(row.querySelector(".jb-output-html table td")?.textContent).toBe("120");
    expect(row.querySelector(".jb-tool-result")?.textContent).toBe("[created 1 figure]");
  });

  it("sanitizes HTML outputs and drops non-raster images", () => {
    const { r, q, all } = make();
    r.append([
      start,
      {
        type: "tool_call_end", step: 1, call_id: "x", name: "run_python", status: "ok",
        outputs: [
          { mime_type: "text/html", data: '<table onclick="x()"><tr><td>1</td></tr></table><script>window.bad=1</script><img src=x onerror="window.bad=2">', role: "display" },
          { mime_type: "image/svg+xml", data: "<svg onload=alert(1)>", role: "display" },
          { mime_type: "image/png", data: "not base64!", role: "display" },
          { mime_type: "text/markdown", data: "*hi* <b onmouseover=x>b</b>", role: "display" },
        ],
      },
    ]);
    expect(q(".jb-output-html table")).not.toBeNull();
    expect(all("script, [onerror], [onclick], [onmouseover], svg")).toHaveLength(0);
    expect(all(".jb-tool-outputs img")).toHaveLength(1); // the sanitized <img src=x>, no handler
    expect(q(".jb-tool-outputs em")?.textContent).toBe("hi");
  });

  it("shows edit_file as a diff, write_file as new content, other tools as key/value", () => {
    const { r, all, q } = make();
    r.append([
      start,
      { type: "tool_call_args", step: 1, call_id: "e", name: "edit_file", arguments: { path: "r.md", old: "a\nb\nc", new: "a\nB\nc" } },
      { type: "tool_call_args", step: 1, call_id: "w", name: "write_file", arguments: { path: "notes.txt", content: "one\ntwo" } },
      { type: "tool_call_args", step: 1, call_id: "k", name: "read_file", arguments: { path: "a.csv", limit: 5, opts: { x: 1 } } },
    ]);
    expect(all('[data-call-id="e"] .jb-diff-del').map((e) => e.textContent)).toEqual(["-b\n"]);
    expect(all('[data-call-id="e"] .jb-diff-add').map((e) => e.textContent)).toEqual(["+B\n"]);
    expect(all('[data-call-id="w"] .jb-diff-add').map((e) => e.textContent)).toEqual(["+one\n", "+two\n"]);
    expect(q('[data-call-id="w"] .jb-args-path code')?.textContent).toBe("notes.txt");
    expect(all('[data-call-id="k"] dt, [data-call-id="k"] dd').map((e) => e.textContent)).toEqual([
      "path", "a.csv", "limit", "5", "opts", '{"x":1}',
    ]);
  });

  it("clips long values and results with a show-all toggle", () => {
    const { r, q } = make();
    const long = Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n");
    r.append([start, { type: "tool_call_end", step: 1, call_id: "l", name: "list", status: "ok", result_preview: long }]);
    const pre = () => q(".jb-tool-result pre")!.textContent ?? "";
    expect(pre()).not.toContain("line 39");
    const button = q(".jb-show-all") as HTMLButtonElement;
    expect(button.textContent).toBe("show all (40 lines)");
    button.click();
    expect(pre()).toContain("line 39");
    expect(button.getAttribute("aria-expanded")).toBe("true");
  });

  it("classifies arguments and decodes partial JSON strings", () => {
    expect(argsKind("run_python", { code: "1" })).toBe("python");
    expect(argsKind("edit_file", { path: "a", old: "x", new: "y" })).toBe("edit");
    expect(argsKind("write_file", { path: "a", content: "x" })).toBe("write");
    expect(argsKind("search", { query: "x" })).toBe("kv");
    expect(partialJsonString('{"code": "a\\nb\\"c\\u00e9', "code")).toBe('a\nb"cé');
    expect(partialJsonString('{"code": "done", "x": 1}', "code")).toBe("done");
    expect(lineDiff("a\nb", "a\nc")).toBe(" a\n-b\n+c");
  });
});

describe("context events", () => {
  it("lists memories, folds context passages, says which provider took over, and lists sources", () => {
    const { r, q, all } = make();
    r.append([
      start,
      { type: "memory_recall", memories: [{ id: "1", text: "Revenue is in EUR", source: "manual", score: 0.9 }] },
      { type: "context_pack", query: "q", passages: [{ anchor: "notes.md:1", text: "<b>hi</b>", score: 1.5 }] },
      { type: "step_start", step: 1 },
      { type: "provider_fallback", step: 1, failed: "anthropic:claude", next: "openai:gpt-4o", kind: "overloaded", message: "529" },
      {
        type: "citations", step: 1, local: ["notes.md:1"],
        web: [
          { url: "https://example.org/a", title: "Example" },
          { url: "javascript:alert(1)", title: "bad" },
        ],
      },
      { type: "text_delta", step: 1, text: "Answer." },
      { type: "turn_end", status: "completed", text: "", steps: 1 },
    ]);
    expect(q(".jb-memory summary")?.textContent).toBe("Memories used (1)");
    expect(q(".jb-memory li")?.textContent).toContain("Revenue is in EUR");
    const pack = q("details.jb-context-pack") as HTMLDetailsElement;
    expect(pack.open).toBe(false);
    expect(pack.querySelector(".jb-anchor")?.textContent).toBe("notes.md:1");
    expect(pack.querySelector("b")).toBeNull(); // passages are text, not HTML
    expect(q(".jb-fallback")?.textContent).toBe("⇢anthropic:claude failed (overloaded) — continued with openai:gpt-4o");
    const links = all(".jb-sources a");
    expect(links.map((a) => [a.getAttribute("href"), a.getAttribute("rel"), a.getAttribute("target")])).toEqual([
      ["https://example.org/a", "noopener noreferrer", "_blank"],
    ]);
    expect(q(".jb-sources")?.textContent).toContain("bad"); // shown as text, not a link
    // The sources sit under the answer, outside the fold.
    expect(q(".jb-process .jb-sources")).toBeNull();
  });
});

describe("big turns", () => {
  it("paints a large reset in slices, later live events after it, to the same result", () => {
    const events: AgentEvent[] = [start];
    const steps = 170; // 3 events a step: more than SYNC_EVENTS
    for (let s = 1; s <= steps; s++) {
      events.push({ type: "step_start", step: s }, { type: "text_delta", step: s, text: `part **${s}**` }, { type: "step_end", step: s });
    }
    expect(events.length).toBeGreaterThan(SYNC_EVENTS);
    const live = make();
    live.r.append(events);
    const sliced = make();
    const now = vi.spyOn(performance, "now");
    let t = 0;
    now.mockImplementation(() => (t += 1)); // every check costs 1 ms: slices of ~12 events
    sliced.r.reset(events);
    expect(sliced.all(".jb-step").length).toBeLessThan(steps); // not all at once
    expect(sliced.r.root.getAttribute("aria-busy")).toBe("true"); // and it says it is still painting
    sliced.r.append([{ type: "turn_end", status: "completed", text: "", steps }]);
    live.r.append([{ type: "turn_end", status: "completed", text: "", steps }]);
    vi.runAllTimers();
    now.mockRestore();
    expect(sliced.r.root.hasAttribute("aria-busy")).toBe(false);
    expect(sliced.host.innerHTML).toBe(live.host.innerHTML);
    expect(sliced.q(".jb-answer strong")?.textContent).toBe("170");
  }, 30_000);

  it("a new view of a finished turn shows its answer first while the steps paint in slices", () => {
    const events: AgentEvent[] = [start];
    const steps = 170;
    for (let s = 1; s <= steps; s++) {
      events.push({ type: "step_start", step: s }, { type: "text_delta", step: s, text: `part **${s}**` }, { type: "step_end", step: s });
    }
    events.push({ type: "turn_end", status: "completed", text: "part **170**", steps, duration_ms: 1200 });
    const whole = make();
    whole.r.append(events.slice(0, -1));
    whole.r.append(events.slice(-1));
    const sliced = make();
    const now = vi.spyOn(performance, "now");
    let t = 0;
    now.mockImplementation(() => (t += 1)); // every check costs 1 ms: slices of ~12 events
    sliced.r.reset(events);
    expect(sliced.all(".jb-step").length).toBeLessThan(steps); // still painting
    expect(sliced.q(".jb-answer")?.hidden).toBe(false); // ... but the answer is there already
    expect(sliced.q(".jb-answer strong")?.textContent).toBe("170");
    expect((sliced.q(".jb-process") as HTMLDetailsElement).open).toBe(false); // and the steps fold under it
    expect(sliced.q(".jb-process-summary")?.textContent).toContain("170 steps");
    vi.runAllTimers();
    now.mockRestore();
    expect(sliced.host.innerHTML).toBe(whole.host.innerHTML);
  }, 30_000);

  it("paints a live batch of many steps in slices too, to the same result", () => {
    // A fast stream can bring many whole steps in one batch: one task must not paint them all.
    const events: AgentEvent[] = [];
    const steps = 60;
    for (let s = 1; s <= steps; s++) {
      events.push({ type: "step_start", step: s }, { type: "text_delta", step: s, text: `part **${s}**` }, { type: "step_end", step: s });
    }
    const whole = make();
    whole.r.append([start, ...events]);
    const sliced = make();
    sliced.r.append([start]);
    const now = vi.spyOn(performance, "now");
    let t = 0;
    now.mockImplementation(() => (t += 1)); // every check costs 1 ms: slices of ~12 events
    sliced.r.append(events);
    expect(sliced.all(".jb-step").length).toBeGreaterThan(0); // the first slice shows at once
    expect(sliced.all(".jb-step").length).toBeLessThan(steps); // not all in one task
    sliced.r.append([{ type: "turn_end", status: "completed", text: "", steps }]); // waits its turn
    whole.r.append([{ type: "turn_end", status: "completed", text: "", steps }]);
    vi.runAllTimers();
    now.mockRestore();
    expect(sliced.host.innerHTML).toBe(whole.host.innerHTML);
    expect(sliced.q(".jb-answer strong")?.textContent).toBe("60");
  });
});
