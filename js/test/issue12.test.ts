// #12 in the AgentView: retries strike the failed attempt, refusals get a card, truncated
// tool calls and figures show in the tool row, estimated usage is marked.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "../src/protocol";
import { AgentRenderer } from "../src/renderer";

const start: AgentEvent = { type: "turn_start", session_id: "s", user_message: "go", provider: "p", model: "m", ts: 1 };
const PNG = "data:image/png;base64,iVBORw0KGgo=";

function make() {
  const host = document.createElement("div");
  const r = new AgentRenderer(host, { markdown: (s: string) => `<p>${s}</p>`, throttleMs: 0 });
  return { r, q: (s: string) => host.querySelector(s) as HTMLElement | null, all: (s: string) => [...host.querySelectorAll(s)] as HTMLElement[] };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("retries", () => {
  it("strikes what the failed attempt showed and streams the next attempt fresh", () => {
    const { r, q, all } = make();
    r.append([
      start,
      { type: "step_start", step: 1 },
      { type: "thinking_delta", step: 1, text: "hmm" },
      { type: "text_delta", step: 1, text: "partial " },
      { type: "tool_call_start", step: 1, call_id: "c1", name: "add" },
      { type: "retry", step: 1, attempt: 2, max_attempts: 3, reason: "overloaded", message: "Overloaded", delay_s: 1 },
      { type: "text_delta", step: 1, text: "fresh answer" },
      { type: "turn_end", status: "completed", text: "", steps: 1 },
    ]);
    const discarded = all(".jb-discarded");
    expect(discarded.length).toBe(3); // thinking, text, tool timeline
    expect(discarded.map((e) => e.textContent).join(" ")).toContain("partial");
    expect(q(".jb-retry")?.textContent).toContain("retrying 2/3 after: overloaded");
    const live = all(".jb-text:not(.jb-discarded)");
    expect(live.map((e) => e.textContent)).toEqual(["fresh answer"]);
  });
});

describe("refusals", () => {
  it("shows a refusal card with the reason and a refused badge", () => {
    const { r, q } = make();
    r.append([start, { type: "step_start", step: 1 }, { type: "turn_end", status: "refused", text: "I can't help with that." }]);
    expect(q(".jb-refusal .jb-refusal-text")?.textContent).toBe("I can't help with that.");
    expect(q(".jb-badge")?.textContent).toContain("refused");
    expect(q(".jb-turn-end")?.classList.contains("jb-status-refused")).toBe(true);
  });
});

describe("tool rows", () => {
  it("marks a truncated call and shows only data:image figures", () => {
    const { r, q, all } = make();
    r.append([
      start,
      { type: "step_start", step: 1 },
      { type: "tool_call_end", step: 1, call_id: "c1", name: "save", status: "truncated", error: "arguments cut off" },
      {
        type: "tool_call_end", step: 1, call_id: "c2", name: "run_python", status: "ok",
        images: [PNG, "javascript:alert(1)", "data:text/html;base64,PGI+", "image_abc123"],
      },
    ]);
    expect(q('[data-call-id="c1"]')?.classList.contains("jb-tool-truncated")).toBe(true);
    expect(q('[data-call-id="c1"] .jb-tool-icon')?.textContent).toBe("✂");
    const imgs = all('[data-call-id="c2"] img');
    expect(imgs.map((i) => i.getAttribute("src"))).toEqual([PNG]);
  });
});

describe("usage", () => {
  it("marks estimated usage in the footer", () => {
    const { r, q } = make();
    r.append([start, { type: "usage", step: 1, input_tokens: 10, output_tokens: 2, usage_estimated: true }]);
    expect(q(".jb-f-estimated")?.textContent).toBe("≈ estimated");
    r.append([{ type: "turn_start", user_message: "again", ts: 2 }, { type: "usage", step: 1, input_tokens: 1 }]);
    expect(q(".jb-f-estimated")).toBeNull();
  });
});
